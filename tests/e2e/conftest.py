"""Fixtures the end-to-end ingest modules share. A module overrides any of them by defining its own (the main
ingest module uses the full corpus; the window module leaves a thread unresolved)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.review_ingest_support import copy_project, ingest, new_project, small_corpus
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    """The fixture corpus cut to a few pull requests (the hard cases stay): each CLI run costs fsyncs."""
    return small_corpus(load_fixture())


@pytest.fixture(scope="module")
def template(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the public repository allowlisted (`new_project`), never ingested: tests copy it."""
    return new_project(module_installation, tmp_path_factory.mktemp("template") / "p", PUBLIC_REPOSITORY)


@pytest.fixture(scope="module")
def ingested(template: Path, module_installation: Installation, tmp_path_factory: pytest.TempPathFactory,
             corpus: dict[str, Any]) -> Path:
    """The corpus ingested once into a copy of the template (a completed incremental run); tests copy it."""
    project = copy_project(template, tmp_path_factory.mktemp("ingested") / "p")
    with FakeGitHub(corpus).running() as fake:
        assert ingest(module_installation, project, fake).returncode == 0
    return project


@pytest.fixture
def fake(corpus: dict[str, Any]) -> Iterator[FakeGitHub]:
    with FakeGitHub(corpus).running() as running:
        yield running
