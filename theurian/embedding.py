"""The offline embedding model: one owner for where it comes from, loading it once, embedding and its identity.

The bundled default is wordllama's `l2_supercat_256` static model, read straight from the files the `wordllama`
wheel installs (its weights and tokenizer; the `wordllama` package itself is never imported — its loader reaches
for a model hub when a file is missing, and it configures the root logger on import). Nothing downloads, ever.

Another model is a local folder holding `theurian-model.toml` (see `MODEL_MANIFEST`), named by the installation
config's `embedding_model` key (`theurian.installation.embedding_model_dir`) or passed as `model_dir`:

    name = "my-model"                  # the name the store and every answer report
    kind = "static"                    # the mean of per-token vectors, like wordllama
    weights = "model.safetensors"      # a 2-D float matrix, one row per token id
    tensor = "embedding.weight"        # the matrix's name inside the file
    tokenizer = "tokenizer.json"       # a Hugging Face `tokenizers` file

Every vector is float32 and L2-normalised, so a dot product is the cosine; a text with no token gives a zero row.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from theurian.errors import ConfigError, TheurianError
from theurian.text import quoted

if TYPE_CHECKING:
    # numpy is imported where it is used, never at import: its BLAS starts threads, and `review build` forks its
    # lake readers only from a process with one thread (`theurian.forked.fork_is_safe`).
    import numpy
    import numpy.typing

MODEL_MANIFEST: Final = "theurian-model.toml"
MODEL_KINDS: Final = ("static",)
DEFAULT_MODEL_NAME: Final = "wordllama-l2-supercat-256"
_WORDLLAMA_PACKAGE: Final = "wordllama"
_WORDLLAMA_WEIGHTS: Final = ("weights", "l2_supercat_256.safetensors")
_WORDLLAMA_TOKENIZER: Final = ("tokenizers", "l2_supercat_tokenizer_config.json")
_WORDLLAMA_TENSOR: Final = "embedding.weight"
_BATCH: Final = 256  # texts per tokenizer call: bounds the padded id matrix, not the answer


@dataclass(frozen=True)
class ModelIdentity:
    """What a stored vector was made with: a store built with another identity is superseded."""

    name: str
    dimension: int
    weights_sha256: str  # sha256 of the weight file's bytes


class EmbeddingModel(Protocol):
    @property
    def identity(self) -> ModelIdentity: ...

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        """(len(texts), dimension) float32, every row L2-normalised (an empty text gives a zero row)."""
        ...


@dataclass(frozen=True)
class ModelFiles:
    """Where one static model's parts are on disk."""

    name: str
    weights: Path
    tensor: str
    tokenizer: Path


class StaticModel:
    """Mean-pooled static token vectors (wordllama's model family): a text is the mean of its tokens' rows."""

    def __init__(self, files: ModelFiles) -> None:
        import numpy
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._identity = identity_of(files)  # refuses weights without the 2-D tensor before any load
        try:
            tensors = load_file(str(files.weights))
            self._tokenizer = Tokenizer.from_file(str(files.tokenizer))
            self._matrix = numpy.ascontiguousarray(tensors[files.tensor], dtype=numpy.float32)
        except Exception as exc:
            raise ConfigError(f"model {files.name!r} cannot be loaded ({one_line_reason(exc)})") from exc
        self._tokenizer.no_padding()  # ids per text, no pads to average in
        self._tokenizer.no_truncation()

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def embed(self, texts: Sequence[str]) -> numpy.typing.NDArray[numpy.float32]:
        import numpy

        out = numpy.zeros((len(texts), self._identity.dimension), dtype=numpy.float32)
        vocabulary = self._matrix.shape[0]
        for start in range(0, len(texts), _BATCH):
            chunk = list(texts[start:start + _BATCH])
            for offset, encoding in enumerate(self._tokenizer.encode_batch(chunk, add_special_tokens=False)):
                ids = [token for token in encoding.ids if 0 <= token < vocabulary]
                if ids:
                    out[start + offset] = self._matrix[ids].mean(axis=0)
        return normalise_rows(out)


def normalise_rows(vectors: numpy.typing.NDArray[numpy.float32]) -> numpy.typing.NDArray[numpy.float32]:
    """Each row scaled to unit length in place; a zero row stays zero."""
    import numpy

    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    numpy.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


_loaded: dict[Path | None, EmbeddingModel] = {}
_identities: dict[Path | None, ModelIdentity] = {}
_loading = threading.Lock()


def load_model(model_dir: Path | None = None) -> EmbeddingModel:
    """The installation's model, loaded once per process (cached); model_dir selects another local model folder.

    With no `model_dir`, the installation config's `embedding_model` folder if it names one, else the bundled
    default.

    Raises:
        ConfigError: the folder has no usable manifest, or its files cannot be read as the manifest says.
    """
    key = _model_key(model_dir)
    with _loading:
        model = _loaded.get(key)
        if model is None:
            model = _loaded[key] = StaticModel(_model_files(key))
        return model


def model_identity(model_dir: Path | None = None) -> ModelIdentity:
    """The identity `load_model(model_dir).identity` has, read from the manifest and the weights file without
    loading the model (once per process): what opening a store compares its vectors' model with, so a command
    that reads a store and embeds nothing does not pay the model's load (~0.4 s, its tokenizer most of it). A
    tokenizer that cannot be read is found by what embeds (`load_model`, doctor's `embedding model` row).

    Raises:
        ConfigError: as `load_model`, for the manifest and the weights.
    """
    key = _model_key(model_dir)
    with _loading:
        model = _loaded.get(key)
        if model is not None:
            return model.identity
        identity = _identities.get(key)
        if identity is None:
            identity = _identities[key] = identity_of(_model_files(key))
        return identity


def _model_key(model_dir: Path | None) -> Path | None:
    """The cache key of the model `model_dir` names: its resolved folder, or None for the bundled default."""
    if model_dir is None:
        from theurian.installation import embedding_model_dir

        model_dir = embedding_model_dir()
    return model_dir.resolve() if model_dir is not None else None


def _model_files(key: Path | None) -> ModelFiles:
    return bundled_model_files() if key is None else read_model_folder(key)


def identity_of(files: ModelFiles) -> ModelIdentity:
    """The model's identity from one pass over its weights file: the sha256 of its bytes, hashed a block at a time
    (a model's weights may be large), and the width of its tensor, from the file's safetensors header (an 8-byte
    little-endian length, then that many bytes of JSON naming each tensor's shape; the format's own spec) rather
    than from loading the tensors.

    Raises:
        ConfigError: the file cannot be read, is not safetensors, or has no 2-D tensor `files.tensor`.
    """
    digest = hashlib.sha256()
    try:
        with files.weights.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            start = handle.read(8)
            length = int.from_bytes(start, "little")
            if len(start) < 8 or length > size - 8:
                raise ValueError("not a safetensors file: its header length runs past its end")
            text = handle.read(length)
            digest.update(start + text)
            header = json.loads(text)
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ConfigError(f"model {files.name!r} cannot be loaded ({one_line_reason(exc)})") from exc
    entry = header.get(files.tensor) if isinstance(header, dict) else None
    shape = entry.get("shape") if isinstance(entry, dict) else None
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(n, int) and n > 0 for n in shape)):
        raise ConfigError(f"model {files.name!r}: {files.weights.name} has no 2-D tensor {files.tensor!r}")
    return ModelIdentity(files.name, shape[1], digest.hexdigest())


def embedding_model_fault() -> str | None:
    """Why the installation's embedding model cannot be loaded, or None when it loads (once a process: `load_model`
    keeps it). The one owner of that fact: doctor's `embedding model` row, its review store row, `theurian index
    status` and knowledge.search's `retrieval.unavailableChannels` all ask it. Every review store is built and
    opened with the model, so while it fails every store fails too, and no build cures that: `model_cure` does."""
    try:
        load_model()
    except TheurianError as exc:  # ConfigError, or the installation config itself refused
        return exc.message
    return None


def model_cure() -> str:
    """What cures a model that does not load: the config key, or the folder it names (no build does)."""
    from theurian.installation import installation_config_path

    return (f"fix `embedding_model` in {installation_config_path()} or the model folder it names "
            "(docs/review-similar.md); without the key the bundled model is used")


def bundled_model_files() -> ModelFiles:
    """The default model's files, found where the `wordllama` wheel installed them (without importing it)."""
    spec = importlib.util.find_spec(_WORDLLAMA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the bundled embedding model (package wordllama) is not installed; reinstall theurian")
    root = Path(next(iter(spec.submodule_search_locations)))
    return ModelFiles(
        DEFAULT_MODEL_NAME, root.joinpath(*_WORDLLAMA_WEIGHTS), _WORDLLAMA_TENSOR, root.joinpath(*_WORDLLAMA_TOKENIZER)
    )


def read_model_folder(folder: Path) -> ModelFiles:
    """A local model folder's manifest, checked: its files must stay inside the folder.

    Raises:
        ConfigError: no manifest, not TOML, a missing or unknown key, an unknown kind, a file outside the folder.
    """
    manifest = folder / MODEL_MANIFEST
    try:
        document = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{folder} is not a model folder: it has no {MODEL_MANIFEST}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{manifest} cannot be read as TOML ({one_line_reason(exc)})") from exc
    values = {key: document.get(key) for key in ("name", "kind", "weights", "tensor", "tokenizer")}
    missing = [key for key, value in values.items() if not isinstance(value, str) or not value]
    if missing:
        raise ConfigError(f"{manifest}: {missing[0]} must be a non-empty string")
    if values["kind"] not in MODEL_KINDS:
        raise ConfigError(f"{manifest}: kind {quoted(str(values['kind']))} is not one of {', '.join(MODEL_KINDS)}")
    return ModelFiles(
        str(values["name"]), _inside(folder, str(values["weights"]), manifest), str(values["tensor"]),
        _inside(folder, str(values["tokenizer"]), manifest),
    )


def _inside(folder: Path, name: str, manifest: Path) -> Path:
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise ConfigError(f"{manifest}: {quoted(name)} is outside the model folder")
    return path


def one_line_reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
