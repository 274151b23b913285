"""A lost or foreign `.theurian/review.salt` is refused through the real CLI, never silently remade: the ingest and
`review scan` (and `migrate apply`, at the first secret it would fingerprint) refuse in one line naming the file
and the cure, write nothing and ask GitHub nothing; `review ingest --rekey` is the deliberate new key; a lake from
before fingerprints were recorded (the bundled fixtures) behaves as it always did; doctor shows a failed check."""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

from evidence.content_policy import SALT_FILE, project_salt
from evidence.salt_key import SALT_FINGERPRINT_FIELD, salt_fingerprint
from projection.findings_store import STORE_RELATIVE as FINDINGS_STORE
from tests.e2e.review_ingest_support import copy_project, ingest, record_files
from tests.e2e.test_findings_secrets_e2e import HISTORY as SECRET_HISTORY
from tests.e2e.test_knowledge_secrets_e2e import BODY, _write_deploy
from tests.knowledge.authoring import copy_sample
from tests.projection.git_fixture import write_history
from tests.support.fake_github import FakeGitHub
from tests.support.installation import Installation
from theurian.project import REVIEW_DIR

FIXTURE_LAKE = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
# Every refusal here is of a command run with --project, so its cure names that project (`theurian.cli.pasteable`).
REKEY = "`theurian review ingest --rekey --project {project}`"
RESTORE = ("restore it from the backup or the clone the lake came from (a new salt would give the same people new "
           "pseudonyms and the same secrets new fingerprints)")


def _manifests(project: Path) -> list[dict[str, object]]:
    runs = sorted((project / REVIEW_DIR / "runs").glob("*.json"))
    return [json.loads(path.read_text(encoding="utf-8")) for path in runs]


def _lake_bytes(project: Path) -> dict[str, bytes]:
    review = project / REVIEW_DIR
    return {str(p.relative_to(review)): p.read_bytes() for p in sorted(review.rglob("*")) if p.is_file()}


def _lost_line(fingerprint: str, run_id: object, project: Path) -> str:
    return (f"theurian: {SALT_FILE} is missing, but the lake was keyed by a salt (fingerprint {fingerprint}, "
            f"recorded by run {run_id}): {RESTORE}; to key the lake by a new salt deliberately, "
            f"{REKEY.format(project=project)}; nothing was written\n")


def _foreign_line(own: str, fingerprint: str, run_id: object, project: Path) -> str:
    return (f"theurian: {SALT_FILE} is not the salt the lake was keyed by (its fingerprint is {own}; run {run_id} "
            f"recorded {fingerprint}): restore the project's own salt from the backup; to key the lake by this one "
            f"from now on, {REKEY.format(project=project)}; nothing was written\n")


def _foreign_salt(project: Path) -> bytes:
    salt = secrets.token_bytes(32)
    (project / SALT_FILE).write_text(salt.hex() + "\n", encoding="utf-8")
    return salt


def test_an_ingest_records_the_fingerprint_of_the_salt_that_keyed_its_run(ingested: Path) -> None:
    (manifest,) = _manifests(ingested)
    assert manifest[SALT_FINGERPRINT_FIELD] == salt_fingerprint(project_salt(ingested))
    assert project_salt(ingested).hex() not in json.dumps(manifest)


def test_an_ingest_over_a_keyed_lake_whose_salt_is_lost_refuses_asks_nothing_and_writes_nothing(
        installation: Installation, ingested: Path, fake: FakeGitHub, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    (manifest,) = _manifests(project)
    (project / SALT_FILE).unlink()
    before = _lake_bytes(project)
    for args in ((), ("--full",)):
        result = ingest(installation, project, fake, *args)
        assert result.returncode == 1 and result.stderr == _lost_line(str(manifest[SALT_FINGERPRINT_FIELD]),
                                                                      manifest["runId"], project)
    assert fake.requests == 0 and not (project / SALT_FILE).exists() and _lake_bytes(project) == before


def test_an_ingest_with_another_projects_salt_refuses_and_leaves_that_salt_alone(
        installation: Installation, ingested: Path, fake: FakeGitHub, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    (manifest,) = _manifests(project)
    salt = _foreign_salt(project)
    before = _lake_bytes(project)
    result = ingest(installation, project, fake)
    assert result.returncode == 1
    assert result.stderr == _foreign_line(salt_fingerprint(salt), str(manifest[SALT_FINGERPRINT_FIELD]),
                                          manifest["runId"], project)
    assert fake.requests == 0 and project_salt(project) == salt and _lake_bytes(project) == before


def test_rekey_makes_a_new_salt_that_its_run_records_and_later_plain_runs_accept(
        installation: Installation, ingested: Path, fake: FakeGitHub, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    (old,) = _manifests(project)
    (project / SALT_FILE).unlink()
    assert ingest(installation, project, fake, "--rekey", "--full").returncode == 0
    new = project_salt(project)
    newest = _manifests(project)[-1]
    assert newest[SALT_FINGERPRINT_FIELD] == salt_fingerprint(new) != old[SALT_FINGERPRINT_FIELD]
    assert _manifests(project)[0] == old  # the old run's record of its own key stays as it was
    assert ingest(installation, project, fake).returncode == 0
    # Restoring the old salt after a re-key is a salt that is not the lake's any more: refused like any other.
    (project / SALT_FILE).write_bytes((ingested / SALT_FILE).read_bytes())
    assert ingest(installation, project, fake).stderr.startswith(f"theurian: {SALT_FILE} is not the salt")


def test_a_lake_from_before_fingerprints_without_a_salt_is_ingested_as_it_always_was(
        installation: Installation, ingested: Path, fake: FakeGitHub, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    for path in (project / REVIEW_DIR / "runs").glob("*.json"):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        del manifest[SALT_FINGERPRINT_FIELD]
        path.write_text(json.dumps(manifest), encoding="utf-8")
    (project / SALT_FILE).unlink()
    assert ingest(installation, project, fake).returncode == 0
    assert _manifests(project)[-1][SALT_FINGERPRINT_FIELD] == salt_fingerprint(project_salt(project))


def test_review_scan_of_the_bundled_lake_makes_a_salt_records_it_then_refuses_once_it_is_lost(
        installation: Installation, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    shutil.rmtree(project / REVIEW_DIR, ignore_errors=True)
    shutil.copytree(FIXTURE_LAKE, project / REVIEW_DIR)
    records = record_files(project)
    assert all(SALT_FINGERPRINT_FIELD not in m for m in _manifests(project))
    scanned = installation.cli("review", "scan", "--project", str(project), check=True)
    assert "recorded the salt's fingerprint in 1 run manifest(s) that had none" in scanned.stdout
    fingerprint = salt_fingerprint(project_salt(project))
    assert [m[SALT_FINGERPRINT_FIELD] for m in _manifests(project)] == [fingerprint]
    assert record_files(project) == records  # nothing in the fixtures is keyed: only the manifest learnt the salt
    (project / SALT_FILE).unlink()
    before = _lake_bytes(project)
    run_id = _manifests(project)[0]["runId"]
    for args in (("--dry-run",), ()):
        result = installation.cli("review", "scan", *args, "--project", str(project))
        assert result.returncode == 1 and result.stderr == _lost_line(fingerprint, run_id, project)
    assert not (project / SALT_FILE).exists() and _lake_bytes(project) == before
    _foreign_salt(project)
    assert installation.cli("review", "scan", "--project", str(project)).stderr.startswith(
        f"theurian: {SALT_FILE} is not the salt the lake was keyed by")
    assert _lake_bytes(project) == before


def test_review_build_still_builds_a_keyed_lake_whose_salt_is_lost(
        installation: Installation, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    (project / SALT_FILE).unlink()
    installation.cli("review", "build", "--project", str(project), check=True)  # it reads records, keys nothing
    assert not (project / SALT_FILE).exists()


def test_migrate_apply_refuses_to_fingerprint_a_secret_with_a_lost_or_foreign_salt_and_changes_nothing(
        installation: Installation, ingested: Path, tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "k")
    (root / ".theurian/config.toml").write_text('[review]\nallowlist = []\nacknowledged_secrets = '
                                                '["0123456789abcdef"]\n', encoding="utf-8")
    _write_deploy(root, BODY)
    lost = installation.cli("migrate", "apply", "--project", str(root))
    assert lost.returncode == 1 and lost.stderr == (
        f"theurian: {SALT_FILE} is missing, but [review] acknowledged_secrets in .theurian/config.toml lists "
        f"fingerprints it keyed: {RESTORE}; or, to start a new salt, take those fingerprints out of "
        ".theurian/config.toml; nothing was written\n")
    assert not (root / SALT_FILE).exists() and not (root / ".theurian/state/knowledge-active.json").exists()
    # validate makes the salt at a secret as apply does (so its refusal can name the fingerprint), so it meets the
    # same refusal to remake one the acknowledgements were keyed by, and writes nothing either.
    validated = installation.cli("migrate", "validate", "--project", str(root))
    assert (validated.returncode, validated.stderr) == (1, lost.stderr)
    assert not (root / SALT_FILE).exists()
    shutil.copytree(ingested / REVIEW_DIR, root / REVIEW_DIR)
    salt = _foreign_salt(root)
    (manifest,) = _manifests(root)
    foreign = installation.cli("migrate", "apply", "--project", str(root))
    assert foreign.returncode == 1 and foreign.stderr == _foreign_line(
        salt_fingerprint(salt), str(manifest[SALT_FINGERPRINT_FIELD]), manifest["runId"], root)
    assert not (root / ".theurian/state/knowledge-active.json").exists()


def test_findings_build_refuses_to_fingerprint_a_trailer_secret_with_a_foreign_salt_as_the_ingest_refuses_it(
        installation: Installation, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    own = (project / SALT_FILE).read_bytes()
    write_history(project, SECRET_HISTORY)
    salt = _foreign_salt(project)
    (manifest,) = _manifests(project)
    foreign = installation.cli("findings", "build", "--project", str(project))
    assert (foreign.returncode, foreign.stdout) == (1, "")
    assert foreign.stderr == _foreign_line(salt_fingerprint(salt), str(manifest[SALT_FINGERPRINT_FIELD]),
                                           manifest["runId"], project)
    assert not (project / FINDINGS_STORE).exists() and (project / SALT_FILE).read_bytes() == salt.hex().encode() + b"\n"
    (project / SALT_FILE).write_bytes(own)  # the lake's own salt: built, its marker keyed as the lake's are
    built = installation.cli("findings", "build", "--project", str(project), check=True)
    assert built.stdout.strip().endswith("; secrets (policy redact): 1 found in 1 findings, which was redacted")


def test_doctor_and_project_status_fail_the_salt_check_of_a_keyed_lake_whose_salt_is_lost(
        installation: Installation, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    installation.cli_in_process("project", "register", str(project), "--id", "salted")
    checks = {c["check"]: c for c in json.loads(installation.cli("doctor", "--json").stdout)["summary"]["checks"]}
    assert checks["salted: review salt"] == {"check": "salted: review salt", "level": "ok", "state": SALT_FILE,
                                             "cure": ""}
    (manifest,) = _manifests(project)
    (project / SALT_FILE).unlink()
    doctor = installation.cli("doctor", "--json")
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["summary"]["checks"]}
    assert doctor.returncode == 1 and checks["salted: review salt"]["level"] == "fail"
    assert checks["salted: review salt"]["state"] == (
        f"{SALT_FILE} is missing, but the lake was keyed by a salt (fingerprint {manifest[SALT_FINGERPRINT_FIELD]}, "
        f"recorded by run {manifest['runId']})")
    assert checks["salted: review salt"]["cure"].startswith("restore it from the backup")
    status = installation.cli("project", "status", "salted")
    assert status.stderr == "" and "review salt: " in status.stdout and "[fail]" in status.stdout
    assert not (project / SALT_FILE).exists()
