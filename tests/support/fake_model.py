"""A tiny static embedding model folder, made on the spot: the seam for another local model, tested for real."""

from __future__ import annotations

from pathlib import Path

import numpy
from safetensors.numpy import save_file
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from theurian.embedding import MODEL_MANIFEST

FAKE_VOCABULARY = {"[UNK]": 0, "lock": 1, "mutex": 2, "order": 3, "log": 4}
# One row per token id: lock and mutex point the same way, log points elsewhere.
FAKE_MATRIX = numpy.array(
    [[0, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=numpy.float16
)


def write_fake_model(folder: Path, name: str = "fake-3d") -> Path:
    """A model folder of three dimensions over a five-word vocabulary, with its manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(WordLevel(FAKE_VOCABULARY, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    save_file({"embedding.weight": FAKE_MATRIX}, str(folder / "weights.safetensors"))
    (folder / MODEL_MANIFEST).write_text(
        f'name = "{name}"\nkind = "static"\nweights = "weights.safetensors"\ntensor = "embedding.weight"\n'
        'tokenizer = "tokenizer.json"\n',
        encoding="utf-8",
    )
    return folder
