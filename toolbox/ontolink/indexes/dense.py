"""Dense name index: a sentence encoder plus FAISS (flat, HNSW or IVF-PQ; GPU when asked)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.indexes import NAME_INDEXES, NameIndex
from ontolink.indexes.faiss_file import faiss_module, read_checked
from ontolink.indexes.flat_search import SCAN_MIN_NAMES, Int8NameScan, NonFiniteVectors, flat_search
from ontolink.core.errors import InputError
from ontolink.core.artifact_files import REBUILD, field, number, load_tensors
from ontolink.core.io import warn
from ontolink.core.options import DEFAULT_SEED
from ontolink.indexes.options import IndexOptions

if TYPE_CHECKING:
    from ontolink.encoders.base import Encoder, KnownVectors
    from ontolink.engines import Engine

FAISS_TYPES = ("flat", "sq8", "hnsw", "ivfpq")


def _gpu_available(faiss: ModuleType) -> bool:
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


GPU_MAX_K = 2048  # faiss-gpu's largest k and nprobe (GPU_MAX_SELECTION_K)
# IVF-PQ code sizes (bytes per vector = sub-quantisers at 8 bits) faiss-gpu has kernels for (IVFPQ.cu)
GPU_PQ_SIZES = (1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96)
GPU_SHARED_MEMORY = 48 * 1024  # bytes of shared memory per block the lookup tables must fit (every CUDA GPU)


def gpu_clone_settings(faiss_type: str, pq_m: int | None = None, nprobe: int | None = None
                       ) -> dict[str, Any] | None:
    """The ``GpuClonerOptions`` fields an index of ``faiss_type`` needs to move to the GPU, or None where it
    stays on the CPU: FAISS has no GPU HNSW (sq8 stays too); an IVF-PQ's lookup tables, one per sub-quantiser of
    256 entries, must fit a block's shared memory, which float32 tables do up to 48 sub-quantisers and float16
    ones up to 96 (--pq-m 56, 64, 96 fail to clone without them); other code sizes and an nprobe over 2,048
    have no GPU kernel."""
    if faiss_type == "flat":
        return {}
    if faiss_type != "ivfpq" or pq_m not in GPU_PQ_SIZES or (nprobe or 0) > GPU_MAX_K:
        return None
    return {"useFloat16LookupTables": 4 * pq_m * 256 > GPU_SHARED_MEMORY}


def faiss_on_device(index: Any, device: str, faiss_type: str) -> tuple[Any, Any]:
    """``index`` moved to the GPU when ``device`` is CUDA and faiss-gpu is installed; (index, resources)."""
    faiss = faiss_module()
    if not (device.startswith("cuda") and _gpu_available(faiss)):
        return index, None
    settings = gpu_clone_settings(faiss_type, *((index.pq.M, index.nprobe) if faiss_type == "ivfpq" else ()))
    if settings is None:
        if faiss_type == "ivfpq":
            warn(f"faiss-gpu has no kernel for IVF-PQ with {index.pq.M} sub-quantisers and nprobe {index.nprobe}: "
                 f"searching on the CPU (GPU sizes: {', '.join(map(str, GPU_PQ_SIZES))}; nprobe <= {GPU_MAX_K})")
        return index, None
    resources = faiss.StandardGpuResources()
    options = faiss.GpuClonerOptions()
    for name, value in settings.items():
        setattr(options, name, value)
    device_id = int(device.split(":")[1]) if ":" in device else 0
    return faiss.index_cpu_to_gpu(resources, device_id, index, options), resources


def search_place(faiss_type: str, on_gpu: bool, k: int) -> str:
    """Where a search of ``k`` neighbours runs: "gpu" (the faiss-gpu copy, for k up to 2,048), "scan" (a flat
    index's own CPU search: the int8 scan or exact float64) or "cpu" (the CPU FAISS index). A k over faiss-gpu's
    limit searches the CPU copy, which every index keeps, so --top-k or a ranker's pool of any size works."""
    if on_gpu and k <= GPU_MAX_K:
        return "gpu"
    return "scan" if faiss_type == "flat" else "cpu"


def make_faiss_index(vectors: np.ndarray, faiss_type: str = IndexOptions.faiss_type, hnsw_m: int = IndexOptions.hnsw_m,
                     ivf_nlist: int | None = None, pq_m: int | None = None, nprobe: int = IndexOptions.nprobe,
                     ef_search: int = IndexOptions.ef_search, seed: int = DEFAULT_SEED) -> tuple[Any, dict[str, Any]]:
    """An inner-product FAISS index holding ``vectors``, and the options that describe it."""
    faiss = faiss_module()
    dimension = vectors.shape[1]
    options: dict[str, Any] = {"type": faiss_type}
    if faiss_type == "flat":
        index = faiss.IndexFlatIP(dimension)
    elif faiss_type == "sq8":
        # one byte per dimension, a scale per dimension trained on the vectors: a quarter of flat's size
        index = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        options.update(bytes_per_vector=dimension)
    elif faiss_type == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = ef_search
        options.update(hnsw_m=hnsw_m, ef_search=ef_search)
    elif faiss_type == "ivfpq":
        if len(vectors) < 256:  # 8-bit PQ trains 256 centroids per sub-quantiser
            raise InputError(f"--faiss ivfpq needs at least 256 vectors to train, this index has {len(vectors)}: "
                             "use flat or sq8")
        nlist = ivf_nlist or max(1, min(int(4 * np.sqrt(len(vectors))), len(vectors) // 39))
        pq_m = pq_m or next(m for m in (48, 32, 24, 16, 12, 8, 4, 2, 1) if dimension % m == 0)
        if dimension % pq_m:
            raise InputError(f"--pq-m {pq_m} must divide the encoder dimension {dimension}")
        quantizer = faiss.IndexFlatIP(dimension)
        index = faiss.IndexIVFPQ(quantizer, dimension, nlist, pq_m, 8, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.pq.cp.seed = seed
        index.train(vectors)
        index.nprobe = nprobe
        options.update(nlist=nlist, pq_m=pq_m, nprobe=nprobe, bytes_per_vector=pq_m)
    else:
        raise InputError(f"unknown FAISS index type {faiss_type!r} (known: {', '.join(FAISS_TYPES)})")
    index.add(vectors)
    return index, options


def read_faiss(path: Path, options: dict[str, Any], dimension: int, count: int) -> Any:
    """Read a FAISS file written by ontolink, checked first against what the artifact says it holds (``count``
    vectors of ``dimension``: faiss_file.py), restoring its search-time settings."""
    manifest = path.parent / "manifest.json"
    index = read_checked(path, options["type"], dimension, count)
    # held to the vectors and the lists there are: more candidates or lists find nothing more, and a manifest's
    # 10^12 overflowed FAISS's int, its 10^8 made each HNSW search hold (and zero-fill) 10^8 candidates
    if options["type"] == "hnsw":
        index.hnsw.efSearch = min(number(options, manifest, "ef_search", low=1), max(count, 1))
    elif options["type"] == "ivfpq":
        index.nprobe = min(number(options, manifest, "nprobe", low=1), index.nlist)
    return index


# FAISS kinds that give back a stored vector exactly, so a mention that tokenises like a name can reuse it
EXACT_STORAGE = ("flat", "hnsw")
NAME_KEYS_FILE = "name_keys.safetensors"


class IndexedNameVectors:
    """The stored vectors of an index's names, found by token key: a mention that tokenises exactly like an
    indexed name (about half of GSC+) gets that name's vector without being encoded."""

    def __init__(self, keys: np.ndarray, faiss_index: Any) -> None:
        self._keys = keys
        self._faiss_index = faiss_index
        self._row_of: dict[bytes, int] | None = None

    def get_many(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        if self._row_of is None:  # built on first use: 40,000 names take a few milliseconds
            self._row_of = {bytes(key): row for row, key in enumerate(self._keys)}
        looked_up = [(key, self._row_of.get(key)) for key in keys]
        rows = [(key, row) for key, row in looked_up if row is not None]
        if not rows:
            return {}
        vectors = self._faiss_index.reconstruct_batch(np.array([row for _, row in rows], dtype=np.int64))
        return {key: vector for (key, _), vector in zip(rows, vectors)}


@NAME_INDEXES.register("dense")
class DenseNameIndex(NameIndex):
    method = "dense"
    uses_encoder = True
    files: tuple[str, ...] = ("index.faiss",)  # and name_keys.safetensors where stored vectors can stand in for encoding

    def __init__(self, encoder: Encoder, faiss_index: Any, faiss_options: dict[str, Any],
                 name_keys: np.ndarray | None = None) -> None:
        self.encoder = encoder
        self.faiss_options = dict(faiss_options)
        self._cpu_index = faiss_index
        self._index, self._gpu_resources = faiss_on_device(faiss_index, encoder.device, faiss_options["type"])
        self.name_keys = name_keys
        self.files = ("index.faiss",) + ((NAME_KEYS_FILE,) if name_keys is not None else ())
        self._known = IndexedNameVectors(name_keys, faiss_index) if name_keys is not None else None
        self._scan: Int8NameScan | None = None
        self._exact_names: np.ndarray | None = None
        self._ahead: dict[str, np.ndarray] | None = None  # query vectors computed ahead (``searching_with``)
        self.source: Path | None = None  # the FAISS file it was read from, named when its numbers are damaged

    @classmethod
    def build(cls, texts: Sequence[str], encoder: Encoder, faiss_type: str = IndexOptions.faiss_type,
              seed: int = DEFAULT_SEED, progress: Any = None, known: KnownVectors | None = None,
              engine: Engine | None = None, **faiss_options: Any) -> DenseNameIndex:
        """``known``: an embedding cache to reuse vectors from and add new ones to; ``engine``: where
        the names are encoded (batches in input order, so the same vectors anywhere)."""
        # an in-process engine is the encoder's own loop (some encoders override encode without engines)
        spread = {"engine": engine} if engine is not None and not engine.in_process else {}
        keys = None
        if faiss_type in EXACT_STORAGE and encoder.batch_invariant:
            vectors, text_keys = encoder.encode_keyed(texts, progress=progress, known=known, **spread)
            keys = np.frombuffer(b"".join(text_keys), dtype=np.uint8).reshape(len(texts), -1)
        else:
            vectors = encoder.encode(texts, progress=progress, known=known, **spread)
        index, options = make_faiss_index(vectors, faiss_type, seed=seed, **faiss_options)
        return cls(encoder, index, options, keys)

    def save(self, directory: Path) -> None:
        faiss_module().write_index(self._cpu_index, str(directory / "index.faiss"))
        if self.name_keys is not None:
            from safetensors.numpy import save_file

            save_file({"name_keys": self.name_keys}, str(directory / NAME_KEYS_FILE))

    @classmethod
    def load(cls, directory: Path, manifest: dict[str, Any], encoder: Encoder) -> DenseNameIndex:
        options = field(manifest, directory / "manifest.json", "index", "faiss", kind=dict)
        field(manifest, directory / "manifest.json", "index", "faiss", "type", kind=str)
        field(manifest, directory / "manifest.json", "index", "encoder", kind=dict)
        index = read_faiss(directory / "index.faiss", options, encoder.dimension,
                           number(manifest, directory / "manifest.json", "names", low=0))
        keys = None
        described = manifest["index"]["encoder"]
        # stored vectors stand in for encoding only when the query encoder is the one that built the index
        same_encoder = all(described.get(name) == value for name, value in encoder.describe().items())
        if (directory / NAME_KEYS_FILE).exists() and same_encoder and options["type"] in EXACT_STORAGE:
            keys = load_tensors(directory / NAME_KEYS_FILE, {"name_keys": ("u", 2)})["name_keys"]
            if len(keys) != index.ntotal:
                raise InputError(f"{NAME_KEYS_FILE} lists {len(keys)} names but the index holds {index.ntotal}; "
                                 "rebuild it", directory)
        loaded = cls(encoder, index, options, keys)
        loaded.source = directory / "index.faiss"
        return loaded

    def __len__(self) -> int:
        return self._cpu_index.ntotal

    def prepare_search(self) -> None:
        """Make now what the first search would (a large flat index's int8 scan: its names quantised and its ONNX
        session created, 0.1-0.2 s for HPO): `link` counts it in its start-up, not in the rate of its work."""
        if search_place(self.faiss_options["type"], self._gpu_resources is not None, 1) == "scan":
            self._name_scan()

    def encode_ahead(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """{text: vector} of ``texts``, encoded now for a search of them soon (``searching_with``): `link`
        encodes a batch's new mentions on a second thread while the batch before is linked. Empty where a
        text's vector depends on the texts beside it (an encoder that is not batch-invariant): such
        texts are encoded by the search itself, with the batch it is given, as before."""
        texts = list(dict.fromkeys(texts))
        if not texts or not self.encoder.batch_invariant:
            return {}
        return dict(zip(texts, self.encoder.encode(texts, known=self._known)))

    @contextmanager
    def searching_with(self, ahead: dict[str, np.ndarray] | None) -> Iterator[None]:
        """Searches inside take the vectors of ``ahead`` (``encode_ahead``) instead of encoding those texts."""
        self._ahead = ahead or None
        try:
            yield
        finally:
            self._ahead = None

    def _query_vectors(self, texts: Sequence[str]) -> np.ndarray:
        ahead = self._ahead
        if ahead is None or not len(texts):
            return self.encoder.encode(texts, known=self._known)
        missing = [text for text in dict.fromkeys(texts) if text not in ahead]
        computed = dict(zip(missing, self.encoder.encode(missing, known=self._known))) if missing else {}
        return np.stack([ahead[text] if text in ahead else computed[text] for text in texts])

    def search(self, texts: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        vectors = self._query_vectors(texts)
        k = min(k, len(self))
        # texts that tokenise alike have one vector (any encoder): each distinct vector is searched once
        first_of: dict[bytes, int] = {}
        inverse = np.array([first_of.setdefault(vector.tobytes(), len(first_of)) for vector in vectors],
                           dtype=np.int64)
        vectors = vectors[np.unique(inverse, return_index=True)[1]]
        place = search_place(self.faiss_options["type"], self._gpu_resources is not None, k)
        if place == "scan":
            scan = self._name_scan()
            names = self._flat_vectors() if scan is not None else self._exact_name_vectors()
            scores, rows = flat_search(names, vectors, k, scan)
        else:
            scores, rows = (self._index if place == "gpu" else self._cpu_index).search(vectors, k)
        return scores[inverse], rows[inverse]

    def _exact_name_vectors(self) -> np.ndarray:
        """A small flat index's names in float64, made on its first search (``exact_search`` multiplies in
        float64; converting on every search took longer than the product)."""
        if self._exact_names is None:
            exact = self._flat_vectors().astype(np.float64)
            if not np.isfinite(exact).all():
                self._damaged("vectors that are not finite numbers")
            self._exact_names = exact
        return self._exact_names

    def _damaged(self, what: str) -> None:
        # FAISS checks the file's structure, not its numbers: bytes garbled inside the vectors come out here
        raise InputError(f"holds {what}: the file is damaged{REBUILD}", self.source)

    def _name_scan(self) -> Int8NameScan | None:
        """The int8 scan of the names (made on the first search of a large flat index; None for a small one)."""
        if self._scan is None and len(self) >= SCAN_MIN_NAMES:
            try:
                self._scan = Int8NameScan(self._flat_vectors())
            except NonFiniteVectors as error:
                self._damaged(str(error))
        return self._scan

    def vectors(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored vectors of name ``rows`` (what a ranker compares a mention's context with)."""
        row_array = np.asarray(rows, dtype=np.int64)
        if self.faiss_options["type"] == "flat":
            return self._flat_vectors()[row_array]
        try:
            return self._cpu_index.reconstruct_batch(row_array)
        except RuntimeError as error:
            raise InputError(f"this {self.faiss_options['type']} index cannot return stored vectors ({error}); "
                             "use a flat or hnsw index") from None

    def _flat_vectors(self) -> np.ndarray:
        """The flat index's own vector storage as an (n, d) array: a view, not a second copy (62 MB for HPO)."""
        index = self._cpu_index
        return faiss_module().rev_swig_ptr(index.get_xb(), index.ntotal * index.d).reshape(index.ntotal, index.d)

    def describe(self) -> dict[str, Any]:
        # the encoder's registered name first, so `link` rebuilds the same kind of encoder (an encoder
        # that describes itself without it, like the tests' hashed 3-grams, still records it)
        encoder = {"runtime": self.encoder.runtime} | self.encoder.describe()
        return {"method": self.method, "encoder": encoder, "faiss": self.faiss_options}
