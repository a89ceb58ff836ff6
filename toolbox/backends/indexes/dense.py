"""Dense name index: a sentence encoder plus FAISS (flat, HNSW or IVF-PQ; GPU when asked)."""

import numpy as np

from toolbox.backends.encoders import ENCODERS
from toolbox.backends.indexes import NAME_INDEXES, NameIndex
from toolbox.errors import InputError, OntolinkError

FAISS_TYPES = ("flat", "sq8", "hnsw", "ivfpq")


def faiss_module():
    """The faiss module, from faiss-cpu (the `cpu` extra) or faiss-gpu (the `gpu` extra)."""
    try:
        import faiss
    except ImportError:
        raise OntolinkError("FAISS is not installed: pip install 'ontolink[cpu]' (or 'ontolink[gpu]' on a CUDA "
                            "machine); --method tfidf needs no FAISS") from None

    # faiss >= 1.9 only uses BLAS for more than 128,000 queries by default; our query batches
    # are a few hundred, where BLAS is 2-6x faster than the per-query kernel (same results).
    faiss.cvar.distance_compute_blas_threshold = 20
    return faiss


def _gpu_available(faiss):
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


def faiss_on_device(index, device, faiss_type):
    """``index`` moved to the GPU when ``device`` is CUDA and faiss-gpu is installed; (index, resources)."""
    faiss = faiss_module()
    # FAISS has no GPU HNSW; sq8 stays on the CPU too (flat and IVF-PQ are the GPU-supported kinds here)
    if device.startswith("cuda") and _gpu_available(faiss) and faiss_type in ("flat", "ivfpq"):
        resources = faiss.StandardGpuResources()
        device_id = int(device.split(":")[1]) if ":" in device else 0
        return faiss.index_cpu_to_gpu(resources, device_id, index), resources
    return index, None


def make_faiss_index(vectors, faiss_type="flat", hnsw_m=32, ivf_nlist=None, pq_m=None, nprobe=16, ef_search=128,
                     seed=0):
    """An inner-product FAISS index holding ``vectors``, and the options that describe it."""
    faiss = faiss_module()
    dimension = vectors.shape[1]
    options = {"type": faiss_type}
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


def read_faiss(path, options):
    """Read a FAISS file written by ontolink, restoring its search-time settings."""
    faiss = faiss_module()
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as error:
        raise InputError(f"{path.name} is damaged or truncated ({str(error).splitlines()[0]}); rebuild it",
                         path.parent) from None
    if options["type"] == "hnsw":
        index.hnsw.efSearch = options["ef_search"]
    elif options["type"] == "ivfpq":
        index.nprobe = options["nprobe"]
    return index


@NAME_INDEXES.register("dense")
class DenseNameIndex(NameIndex):
    method = "dense"
    uses_encoder = True
    files = ("index.faiss",)

    def __init__(self, encoder, faiss_index, faiss_options):
        self.encoder = encoder
        self.faiss_options = dict(faiss_options)
        self._cpu_index = faiss_index
        self._index, self._gpu_resources = faiss_on_device(faiss_index, encoder.device, faiss_options["type"])

    @classmethod
    def build(cls, texts, encoder, faiss_type="flat", seed=0, progress=None, **faiss_options):
        vectors = encoder.encode(texts, progress=progress)
        index, options = make_faiss_index(vectors, faiss_type, seed=seed, **faiss_options)
        return cls(encoder, index, options)

    def save(self, directory):
        faiss_module().write_index(self._cpu_index, str(directory / "index.faiss"))

    @classmethod
    def load(cls, directory, manifest, encoder):
        options = manifest["index"]["faiss"]
        index = read_faiss(directory / "index.faiss", options)
        if index.d != encoder.dimension:
            raise InputError(f"index has dimension {index.d} but encoder {encoder.model_name} gives "
                             f"{encoder.dimension}", directory)
        return cls(encoder, index, options)

    def __len__(self):
        return self._cpu_index.ntotal

    def search(self, texts, k):
        vectors = self.encoder.encode(texts)
        scores, rows = self._index.search(vectors, min(k, len(self)))
        return scores, rows

    def describe(self):
        # the encoder's registered name, so `link` rebuilds the same kind of encoder
        encoder = {"backend": ENCODERS.name_of(type(self.encoder))} | self.encoder.describe()
        return {"method": self.method, "encoder": encoder, "faiss": self.faiss_options}
