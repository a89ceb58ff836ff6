"""A FAISS file checked before FAISS reads it, and the index it holds checked before it is searched.

FAISS's reader trusts the file: a vector's declared length is allocated (and zero-filled) before it is read, so
a few crafted bytes can ask for terabytes, and an HNSW graph or an inverted list whose row numbers point past
the stored vectors makes a search read outside them (a crash, or wrong results). So the file is walked first,
field by field, for the four kinds ontolink writes (flat, sq8, hnsw, ivfpq; the layout of faiss/impl/
index_write.cpp): every declared length must fit in the bytes that are left, and the dimension and the number
of vectors must be the ones the artifact's manifest and names say. Only then does FAISS read it, through the
file still open (the walk skips what it only counts: vectors, codes, links), and the structure it built (graph
links, list ids, quantiser sizes) is checked before the first search. Each problem is an ``InputError`` naming
the file (exit status 2).
"""

import struct
from types import ModuleType

import numpy as np

from ontolink.core.artifact_files import REBUILD, regular_file
from ontolink.core.errors import InputError, OntolinkError

# the first four bytes of each kind ontolink writes: the index class FAISS stores
FOURCC = {"flat": (b"IxFI", b"IxF2"), "sq8": (b"IxSQ",), "hnsw": (b"IHNf",), "ivfpq": (b"IwPQ",)}
FLAT = (b"IxFI", b"IxF2")
METRICS = (0, 1)  # inner product, L2
QT_8BIT = 0  # ScalarQuantizer::QT_8bit, what sq8 writes
HNSW_CHECK_VECTORS = 1 << 16  # vectors whose links are checked at once (their arrays, not the whole graph's)


def faiss_module() -> ModuleType:
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


class _Bytes:
    """A cursor over the open file that refuses to read, or to be told of, more than is left; what is only
    counted (vectors, codes, links) is skipped, not read, so the walk holds no more than the small fields."""

    def __init__(self, handle, size, path):
        self.handle, self.size, self.at, self.path = handle, size, 0, path

    def fail(self, what):
        raise InputError(f"is damaged, truncated or not a FAISS index of the kind its manifest names ({what})"
                         + REBUILD, self.path)

    def _advance(self, size, what):
        if size < 0 or size > self.size - self.at:
            self.fail(f"{what}: {size} bytes wanted at byte {self.at}, {self.size - self.at} left")
        self.at += size

    def take(self, size, what):
        self._advance(size, what)
        data = self.handle.read(size)
        if len(data) != size:  # the file shrank under us
            self.fail(f"{what}: {size} bytes wanted, {len(data)} read")
        return data

    def skip(self, size, what):
        self._advance(size, what)
        self.handle.seek(self.at)

    def value(self, form, what):
        return struct.unpack("<" + form, self.take(struct.calcsize(form), what))[0]

    def vector(self, item_size, what, keep=False):
        """A FAISS vector: its length (uint64), then that many items; the length is checked before anything.
        (its bytes, or None unless ``keep``; its length)."""
        count = self.value("Q", what + " length")
        if count > (self.size - self.at) // item_size:
            self.fail(f"{what} declares {count} items, more than the {self.size - self.at} bytes left hold")
        if keep:
            return self.take(count * item_size, what), count
        self.skip(count * item_size, what)
        return None, count


def _header(reader, fourccs, what):
    """An index's fourcc and common header: (dimension, number of vectors)."""
    fourcc = reader.take(4, what)
    if fourcc not in fourccs:
        reader.fail(f"{what} is a {fourcc!r} index, expected {' or '.join(map(repr, fourccs))}")
    dimension = reader.value("i", "dimension")
    total = reader.value("q", "number of vectors")
    reader.skip(16, "header")
    reader.value("?", "is_trained")
    metric = reader.value("i", "metric")
    if metric not in METRICS or dimension <= 0 or total < 0:
        reader.fail(f"{what} header: dimension {dimension}, {total} vectors, metric {metric}")
    return fourcc, dimension, total


def _flat(reader, dimension, total, what):
    _, floats = reader.vector(4, what + " vectors")
    if floats != dimension * total:
        reader.fail(f"{what} holds {floats} numbers for {total} vectors of dimension {dimension}")


def _walk(reader, kind, dimension, total):
    """Walk one index of ``kind`` as index_write.cpp lays it out, checking the declared sizes."""
    if kind == "flat":
        _flat(reader, dimension, total, "flat index")
    elif kind == "sq8":
        # 8-bit codes decoded with a range per dimension (a minimum and a width): a search reads 2 x dimension
        # floats, which FAISS readers before 1.15 did not check were there
        quantiser_type = reader.value("i", "scalar quantiser type")
        if quantiser_type != QT_8BIT:
            reader.fail(f"scalar quantiser type {quantiser_type}, not 8-bit codes ({QT_8BIT})")
        reader.skip(8, "scalar quantiser range statistic")
        quantiser_dimension, code_size = reader.value("Q", "quantiser dimension"), reader.value("Q", "code size")
        _, ranges = reader.vector(4, "quantiser ranges")
        if ranges != 2 * dimension:
            reader.fail(f"quantiser ranges: {ranges} numbers for {dimension} dimensions")
        _, code_bytes = reader.vector(1, "codes")
        if quantiser_dimension != dimension or code_size != dimension or code_bytes != total * code_size:
            reader.fail(f"sq8 codes: {code_bytes} bytes of {code_size}-byte codes for {total} vectors")
    elif kind == "hnsw":
        reader.vector(8, "level probabilities")
        # where each level's links of a vector start: a level that ends before the one under it makes a search
        # read past the vector's links (FAISS readers before 1.15 did not check)
        per_level = np.frombuffer(reader.vector(4, "neighbours per level", keep=True)[0], dtype="<i4")
        if per_level.size and (per_level[0] != 0 or np.any(np.diff(per_level) < 0)):
            reader.fail("cumulated neighbours per level that do not start at 0 and grow")
        _, levels = reader.vector(4, "levels")
        _, offsets = reader.vector(8, "graph offsets")
        reader.vector(4, "graph links")
        reader.skip(20, "graph entry point and search settings")
        if levels != total or offsets != total + 1:
            reader.fail(f"graph of {levels} levels and {offsets} offsets for {total} vectors")
        _, storage_dimension, stored = _header(reader, FLAT, "hnsw storage")
        if (storage_dimension, stored) != (dimension, total):
            reader.fail(f"hnsw storage holds {stored} vectors of dimension {storage_dimension}")
        _flat(reader, dimension, total, "hnsw storage")
    elif kind == "ivfpq":
        lists = reader.value("Q", "number of lists")
        reader.value("Q", "nprobe")
        _, quantiser_dimension, centroids = _header(reader, FLAT, "coarse quantiser")
        _flat(reader, quantiser_dimension, centroids, "coarse quantiser")
        if quantiser_dimension != dimension or centroids != lists:
            reader.fail(f"coarse quantiser holds {centroids} centroids of dimension {quantiser_dimension} for "
                        f"{lists} lists")
        if reader.value("b", "direct map type") != 0:
            reader.fail("a direct map (ontolink writes none)")
        reader.vector(8, "direct map")
        reader.value("?", "by_residual")
        code_size = reader.value("Q", "code size")
        pq_dimension, pq_m, pq_bits = (reader.value("Q", name) for name in ("pq dimension", "pq M", "pq bits"))
        _, centroid_floats = reader.vector(4, "pq centroids")
        if (pq_dimension != dimension or pq_bits != 8 or pq_m == 0 or dimension % pq_m or code_size != pq_m
                or centroid_floats != dimension * 256):
            reader.fail(f"product quantiser: dimension {pq_dimension}, M {pq_m}, {pq_bits} bits, code size "
                        f"{code_size}")
        if reader.take(4, "inverted lists") != b"ilar" or reader.value("Q", "number of lists") != lists or \
                reader.value("Q", "code size") != code_size:
            reader.fail("inverted lists header")
        layout = reader.take(4, "inverted list layout")
        sizes, count = reader.vector(8, "inverted list sizes", keep=True)
        sizes = np.frombuffer(sizes, dtype="<u8")
        if layout == b"full" and count == lists:
            per_list = sizes
        elif layout == b"sprs" and count % 2 == 0 and np.all(sizes[0::2] < lists) and np.all(
                sizes[2::2] > sizes[0:-2:2]):  # (list, size) pairs in list order, as FAISS writes them: a list
            per_list = sizes[1::2]  # named twice would be counted twice here, and read once by FAISS
        else:
            reader.fail("inverted list sizes")
        held = sum(per_list.tolist())  # in Python's integers: numpy's uint64 sum wraps past 2^64
        if held != total:
            reader.fail(f"inverted list sizes add up to {held} vectors, the header counts {total}")
        reader.skip(total * (code_size + 8), "inverted list codes and ids")


def read_checked(path, kind, dimension, count):
    """The FAISS index in ``path``, of ``kind`` (flat, sq8, hnsw, ivfpq), holding ``count`` vectors of
    ``dimension`` (what the manifest, the encoder and the names say), checked before and after FAISS reads it."""
    if kind not in FOURCC:
        raise InputError(f"names the FAISS kind {kind!r}, which this version does not know" + REBUILD,
                         path.parent / "manifest.json")
    size = regular_file(path)
    faiss = faiss_module()
    with open(path, "rb") as handle:
        reader = _Bytes(handle, size, path)
        _, found_dimension, total = _header(reader, FOURCC[kind], f"a {kind} index")
        if found_dimension != dimension or total != count:
            raise InputError(f"holds {total} vectors of dimension {found_dimension}, but the index has {count} of "
                             f"dimension {dimension}" + REBUILD, path)
        _walk(reader, kind, dimension, total)
        if reader.at != size:
            reader.fail(f"{size - reader.at} bytes after the index")
        # FAISS reads the file it was checked in, open, straight into the index it builds: read whole into
        # memory and handed over as bytes, it was held three times at once (the bytes, FAISS's copy, the index)
        handle.seek(0)
        try:
            index = faiss.read_index(faiss.PyCallbackIOReader(handle.read))
        except (RuntimeError, MemoryError) as error:
            raise InputError(f"is damaged or truncated ({str(error).splitlines()[0][:200]})" + REBUILD,
                             path) from None
    _check_structure(faiss, index, kind, dimension, count, path)
    return index


def _check_structure(faiss, index, kind, dimension, count, path):
    """What FAISS built holds only row numbers inside it: an HNSW link or an inverted-list id past the vectors
    would be followed by a search."""
    def refuse(what):
        raise InputError(f"is damaged or crafted ({what})" + REBUILD, path)

    if index.d != dimension or index.ntotal != count:
        refuse(f"{index.ntotal} vectors of dimension {index.d}")
    if kind == "hnsw":
        graph = faiss.downcast_index(index).hnsw
        links = faiss.vector_to_array(graph.neighbors)
        offsets = faiss.vector_to_array(graph.offsets).astype(np.int64)
        levels = faiss.vector_to_array(graph.levels)
        per_level = faiss.vector_to_array(graph.cum_nneighbor_per_level)
        if links.size and (links.min() < -1 or links.max() >= count):
            refuse("an HNSW link points outside the vectors")
        if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != links.size:
            refuse("HNSW offsets do not describe the links")
        if levels.size and (levels.min() < 1 or levels.max() >= per_level.size or np.any(
                np.diff(offsets) != per_level[np.minimum(levels, per_level.size - 1)])):
            refuse("HNSW levels do not match the links of each vector")
        if count and not (0 <= graph.entry_point < count and graph.max_level == levels.max() - 1
                          and levels[graph.entry_point] == levels.max()):
            refuse("HNSW entry point or top level")
        # a search climbs down from the entry point reading each vector's links of a level: a link of level L
        # must lead to a vector on level L, or its links of that level are the next vectors' or past them all
        # (FAISS's reader does not check it either)
        for first in range(0, count, HNSW_CHECK_VECTORS):
            last = min(first + HNSW_CHECK_VECTORS, count)
            vertex = np.repeat(np.arange(first, last), np.diff(offsets[first:last + 1]))
            slots = np.arange(offsets[first], offsets[last])
            level = np.searchsorted(per_level, slots - offsets[vertex], side="right") - 1
            targets = links[slots]
            linked = targets >= 0
            if np.any(levels[targets[linked]] <= level[linked]):
                refuse("an HNSW link of a level leads to a vector not on that level")
    elif kind == "ivfpq":
        ivf = faiss.extract_index_ivf(index)
        lists = ivf.invlists
        for number in range(ivf.nlist):
            size = lists.list_size(number)
            if size:
                ids = faiss.rev_swig_ptr(lists.get_ids(number), size)
                if ids.min() < 0 or ids.max() >= count:
                    refuse("an inverted list holds an id outside the vectors")
