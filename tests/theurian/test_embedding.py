from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from tests.support.fake_model import write_fake_model
from theurian.embedding import DEFAULT_MODEL_NAME, MODEL_MANIFEST, bundled_model_files, load_model, model_identity
from theurian.errors import ConfigError
from theurian.installation import installation_config_path


def test_the_bundled_model_embeds_a_batch_as_unit_float32_rows_and_an_empty_text_as_zero() -> None:
    vectors = load_model().embed(["take the locks in the same order", "", "secret leaked into logs"])
    assert vectors.dtype == numpy.float32
    assert vectors.shape == (3, 256)
    assert numpy.allclose(numpy.linalg.norm(vectors[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert not vectors[1].any()


def test_the_bundled_model_is_loaded_once_per_process() -> None:
    assert load_model() is load_model()


def test_the_bundled_identity_names_the_model_its_dimension_and_the_hash_of_its_weights() -> None:
    identity = load_model().identity
    weights = bundled_model_files().weights
    assert identity.name == DEFAULT_MODEL_NAME
    assert identity.dimension == 256
    assert identity.weights_sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()


def test_the_identity_read_without_loading_is_the_loaded_models_and_loads_no_tokenizer(tmp_path: Path) -> None:
    # In a fresh process: this one has loaded the bundled model already, and the identity would be its.
    script = ("import sys; from theurian.embedding import model_identity; i = model_identity(); "
              "print(i.name, i.dimension, i.weights_sha256, 'tokenizers' in sys.modules, 'numpy' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    loaded = load_model().identity
    assert shown == [loaded.name, str(loaded.dimension), loaded.weights_sha256, "False", "False"]
    folder = write_fake_model(tmp_path / "m")
    assert model_identity(folder) == load_model(folder).identity


def test_a_tokenizer_that_cannot_be_read_leaves_the_identity_and_refuses_the_load(tmp_path: Path) -> None:
    folder = write_fake_model(tmp_path / "m")
    (folder / "tokenizer.json").write_text("{", encoding="utf-8")
    assert model_identity(folder).dimension == 3
    with pytest.raises(ConfigError, match="model 'fake-3d' cannot be loaded"):
        load_model(folder)


@pytest.mark.parametrize("weights", [b"", b"\x08\x00\x00\x00\x00\x00\x00\x00{}", b"\xff" * 8 + b"{}",
                                     b"\x02\x00\x00\x00\x00\x00\x00\x00\xff\xfe"])
def test_weights_that_are_not_safetensors_refuse_the_identity_in_one_line(tmp_path: Path, weights: bytes) -> None:
    folder = write_fake_model(tmp_path / "m")
    (folder / "weights.safetensors").write_bytes(weights)
    with pytest.raises(ConfigError, match="^model 'fake-3d' cannot be loaded \\(.+\\)$"):
        model_identity(folder)


def test_a_paraphrase_is_nearer_than_an_unrelated_sentence() -> None:
    first, paraphrase, unrelated = load_model().embed(
        ["the token is printed in the debug log", "a secret leaked into the logs", "rename this variable"]
    )
    assert float(first @ paraphrase) > float(first @ unrelated)


_NO_SOCKET = """
import sys
def refuse(event, args):
    if event.startswith("socket."):
        raise RuntimeError(f"socket opened: {event}")
sys.addaudithook(refuse)
from theurian.embedding import load_model
model = load_model()
print(model.embed(["a lock order"]).shape)
"""


def test_loading_and_embedding_open_no_socket() -> None:
    # A fresh process, so nothing was loaded (or imported) before the hook was in place.
    result = subprocess.run([sys.executable, "-c", _NO_SOCKET], capture_output=True, text=True, timeout=120,
                            encoding="utf-8")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 256)"


def test_a_model_folder_is_loaded_with_its_declared_name_and_averages_its_token_rows(tmp_path: Path) -> None:
    model = load_model(write_fake_model(tmp_path / "model"))
    assert model.identity.name == "fake-3d"
    assert model.identity.dimension == 3
    lock, mutex, mixed, unknown = model.embed(["lock", "mutex", "lock order", "zebra"])
    assert float(lock @ mutex) == pytest.approx(1.0)
    assert numpy.allclose(mixed, [2 ** -0.5, 2 ** -0.5, 0], atol=1e-6)
    assert numpy.allclose(unknown, 0.0)  # the unknown token's row is zero


def test_the_installation_config_points_at_another_model_folder(tmp_path: Path) -> None:
    write_fake_model(tmp_path / "models" / "mine", name="mine-3d")
    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text(f'embedding_model = "{tmp_path / "models" / "mine"}"\n', encoding="utf-8")
    assert load_model().identity.name == "mine-3d"


def test_a_relative_model_folder_is_read_from_the_config_folder() -> None:
    config = installation_config_path()
    write_fake_model(config.parent / "models" / "rel", name="rel-3d")
    config.write_text('embedding_model = "models/rel"\n', encoding="utf-8")
    assert load_model().identity.name == "rel-3d"


def test_a_folder_without_a_manifest_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"is not a model folder: it has no {MODEL_MANIFEST}"):
        load_model(tmp_path)


def test_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    folder = write_fake_model(tmp_path / "m")
    manifest = folder / MODEL_MANIFEST
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"static"', '"bert"'), encoding="utf-8")
    with pytest.raises(ConfigError, match="kind 'bert' is not one of static"):
        load_model(folder)


def test_a_weights_file_outside_the_folder_is_refused(tmp_path: Path) -> None:
    folder = write_fake_model(tmp_path / "m")
    manifest = folder / MODEL_MANIFEST
    text = manifest.read_text(encoding="utf-8").replace('"weights.safetensors"', '"../outside.safetensors"')
    manifest.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="is outside the model folder"):
        load_model(folder)


def test_a_missing_tensor_is_refused_naming_it(tmp_path: Path) -> None:
    folder = write_fake_model(tmp_path / "m")
    manifest = folder / MODEL_MANIFEST
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('tensor = "embedding.weight"', 'tensor = "x"'),
                        encoding="utf-8")
    with pytest.raises(ConfigError, match="has no 2-D tensor 'x'"):
        load_model(folder)


def test_damaged_weights_are_a_config_error_not_a_traceback(tmp_path: Path) -> None:
    folder = write_fake_model(tmp_path / "m")
    (folder / "weights.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ConfigError, match="model 'fake-3d' cannot be loaded"):
        load_model(folder)


def test_a_non_string_config_value_is_refused() -> None:
    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text("embedding_model = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="embedding_model must be the path of a local model folder"):
        load_model()
