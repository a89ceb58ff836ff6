"""FAISS files someone handed you, damaged or crafted: `link` refuses each with exit 2 naming the file, before FAISS
reads it (a declared size past the file) or before the first search (a graph link past the vectors), never a crash.

Each case runs `link` in a child process, so that a crash in compiled code shows as its exit status (-11), and
its peak memory is measured (a declared size is zero-filled by FAISS's reader before it finds the file too short).
The indexes are dense ones over the HPO slice, made with the tests' hashed 3-gram encoder (no model loaded).
"""

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
PACKAGE_DIR = TESTS.parent / "toolbox"
MENTIONS = '{"id": "m1", "mention": "seizures"}\n{"id": "m2", "mention": "cataract"}\n'
# `ontolink link` in a child that knows the tests' encoder
CHILD = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import ngram_encoder; from ontolink.cli.main import main; "
         "sys.argv[0] = 'ontolink'; main()")
# in one child, each index loaded and searched in turn: one line each, its error or "searched"
LOADS = """
import sys
sys.path.insert(0, sys.argv[1])
import ngram_encoder
from ontolink.indexes.artifact import load_index
from ontolink.core.errors import InputError
for directory in sys.argv[2:]:
    try:
        load_index(directory, device="cpu").name_index.search(["seizures", "cataract"], 3)
        print("searched", flush=True)
    except InputError as error:
        print(f"exit {error.exit_code}: {error}".replace(chr(10), " "), flush=True)
"""
HEADER = 4 + 4 + 8 + 16 + 1 + 4  # fourcc, d, ntotal, two unused, is_trained, metric


def _child(arguments, stdin=b""):
    """(exit status, stdout, stderr) of a Python child (a crash in compiled code shows as -11)."""
    child = subprocess.run([sys.executable, "-c", *arguments], input=stdin, capture_output=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(PACKAGE_DIR)})
    return child.returncode, child.stdout.decode(), child.stderr.decode()


def _link(index):
    """(exit status, stderr, stdout) of `link --index index` on two mentions, in a child process."""
    status, stdout, stderr = _child([CHILD, str(TESTS), "link", "--index", str(index), "--top-k", "3"],
                                    MENTIONS.encode())
    return status, stderr, stdout


def _refusals(indexes):
    """What loading and searching each of ``indexes`` (in one child process) gave: one line each."""
    status, stdout, stderr = _child([LOADS, str(TESTS), *map(str, indexes)])
    assert status == 0, (status, stderr[-2000:])  # not -11: a crash in compiled code
    lines = stdout.splitlines()
    assert len(lines) == len(indexes), stderr[-2000:]
    return lines


def _dense_index(small_ontology_path, tmp_path_factory, faiss_type, **options):
    """A dense index of ``faiss_type`` over the HPO slice, with the tests' hashed 3-gram encoder."""
    from ontolink.ontology import load_ontology
    from ontolink.indexes.build import build_index

    directory = tmp_path_factory.mktemp("idx") / faiss_type
    build_index(load_ontology(small_ontology_path), directory, method="dense", runtime="hashed-3grams",
                faiss_type=faiss_type, **options)
    return directory


@pytest.fixture(scope="module")
def hnsw_index(small_ontology_path, tmp_path_factory):
    return _dense_index(small_ontology_path, tmp_path_factory, "hnsw")


@pytest.fixture(params=["flat", "hnsw"])
def index_copy(request, hashed_index, hnsw_index, tmp_path):
    copy = tmp_path / "idx"
    shutil.copytree(hashed_index if request.param == "flat" else hnsw_index, copy)
    return copy


def _variants(index, tmp_path, changes):
    """A copy of ``index`` per change, its index.faiss given the bytes ``change(data)`` returns."""
    data = (index / "index.faiss").read_bytes()
    copies = []
    for number, change in enumerate(changes):
        copy = tmp_path / f"v{number}"
        shutil.copytree(index, copy)
        (copy / "index.faiss").write_bytes(change(data))
        copies.append(copy)
    return copies


def _assert_refused(copies, lines, words):
    for copy, line, expected in zip(copies, lines, words):
        assert line.startswith(f"exit 2: {copy / 'index.faiss'}: ") and expected in line, line


def test_link_refuses_a_damaged_faiss_file_with_exit_2_naming_it(hashed_index, tmp_path):
    """The command itself (the rest of the cases load the index in one child each)."""
    status, stderr, stdout = _link(hashed_index)
    assert status == 0 and stdout.count('"candidates"') == 2, stderr[-3000:]
    copy, = _variants(hashed_index, tmp_path, [lambda data: data[:len(data) // 2]])
    status, stderr, _ = _link(copy)
    assert status == 2, (status, stderr[-2000:])  # not -11 (a crash), not 1 (a traceback)
    assert stderr.startswith(f"ontolink: {copy / 'index.faiss'}: ") or f"{copy / 'index.faiss'}: " in stderr
    assert "truncated" in stderr and "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1


def _random(seed, size, start=b""):
    return start + np.random.default_rng(seed).integers(0, 256, size - len(start), dtype=np.uint8).tobytes()


def test_truncated_and_random_faiss_files_are_refused(index_copy, tmp_path):
    fourcc = (index_copy / "index.faiss").read_bytes()[:4]
    copies = _variants(index_copy, tmp_path, [
        lambda data: data[:len(data) // 2], lambda data: data[:-1], lambda data: data[:10],
        lambda data: _random(0, len(data)),  # random bytes
        lambda data: _random(1, len(data), fourcc),  # the right first four bytes, then random ones
        lambda data: data[:HEADER] + _random(2, len(data) - HEADER),  # a true header, then random bytes
    ])
    lines = _refusals([index_copy] + copies)
    assert lines[0] == "searched"
    _assert_refused(copies, lines[1:], ["truncated"] * 3 + ["not a FAISS index of the kind"] + ["index"] * 2)


def test_a_header_that_disagrees_with_the_manifest_is_refused(index_copy, tmp_path):
    """The file's own count or dimension is not what the manifest and the names say: with a count past the stored
    vectors, a search would read past them."""
    dimension, total = struct.unpack_from("<iq", (index_copy / "index.faiss").read_bytes(), 4)

    def header(offset, form, value):
        def change(data):
            changed = bytearray(data)
            struct.pack_into(form, changed, offset, value)
            return bytes(changed)
        return change

    copies = _variants(index_copy, tmp_path, [header(8, "<q", total + 1000), header(8, "<q", total - 1),
                                              header(4, "<i", dimension * 2)])
    _assert_refused(copies, _refusals(copies), [f"holds {total + 1000} vectors of dimension {dimension},",
                                                f"holds {total - 1} vectors", f"of dimension {dimension * 2},"])


def test_a_declared_length_past_the_file_is_refused_before_it_is_allocated(hashed_index, tmp_path):
    """A flat index whose vector declares 2^28 floats (1 GiB): FAISS's reader allocated and zero-filled them before
    finding the file short."""
    def declare(data):
        changed = bytearray(data)
        struct.pack_into("<Q", changed, HEADER, 1 << 28)
        return bytes(changed)

    copy, = _variants(hashed_index, tmp_path, [declare])
    # the child's own peak (VmHWM, per address space): ru_maxrss of a child starts at its parent's peak on Linux,
    # so under a large pytest process it would measure the parent
    peak = "\nprint(next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')), flush=True)"
    status, stdout, stderr = _child([LOADS + peak, str(TESTS), str(copy)])
    assert status == 0, stderr[-2000:]
    lines = stdout.splitlines()
    high_water = next(line for line in lines if line.startswith("VmHWM:"))
    _assert_refused([copy], lines[:1], ["declares 268435456 items"])
    assert int(high_water.split()[1]) / 1024 < 900, high_water  # kB; the 1 GiB was never made


def test_an_hnsw_link_past_the_vectors_is_refused_before_a_search(hnsw_index, tmp_path):
    """A graph whose links are in the file's bounds but point at vector 1,000,000 of a few hundred: a search would
    follow it. (FAISS 1.15's reader checks the links too; ontolink checks them again before a search, whatever
    FAISS version read the file.)"""
    import faiss

    copy = tmp_path / "idx"
    shutil.copytree(hnsw_index, copy)
    index = faiss.read_index(str(copy / "index.faiss"))
    graph = faiss.downcast_index(index).hnsw
    links = faiss.vector_to_array(graph.neighbors)
    links[links >= 0] = 1_000_000
    faiss.copy_array_to_vector(links, graph.neighbors)
    faiss.write_index(index, str(copy / "index.faiss"))
    _assert_refused([copy], _refusals([copy]), ["HNSW"])


def _entry_on_the_lowest_level(graph, levels, faiss):
    graph.entry_point = int(np.nonzero(levels == 1)[0][-1])


def _upper_links_to_the_lowest_level(graph, levels, faiss):
    links, offsets = faiss.vector_to_array(graph.neighbors), faiss.vector_to_array(graph.offsets)
    per_level, entry = faiss.vector_to_array(graph.cum_nneighbor_per_level), graph.entry_point
    links[int(offsets[entry] + per_level[1]):int(offsets[entry] + per_level[levels[entry]])] = int(
        np.nonzero(levels == 1)[0][-1])
    faiss.copy_array_to_vector(links, graph.neighbors)


@pytest.mark.parametrize("craft", [_entry_on_the_lowest_level, _upper_links_to_the_lowest_level])
def test_an_hnsw_graph_that_climbs_from_a_vector_not_on_its_level_is_refused(hnsw_index, tmp_path, craft):
    """The entry point, or the upper-level links of a vector, on a vector of level 0 only: a search reads that
    vector's links of the upper levels, which are the next vectors' or past the end of them all (FAISS 1.15's
    own checks took both files, and a search died with SIGSEGV)."""
    import faiss

    copy = tmp_path / "idx"
    shutil.copytree(hnsw_index, copy)
    index = faiss.read_index(str(copy / "index.faiss"))
    graph = faiss.downcast_index(index).hnsw
    craft(graph, faiss.vector_to_array(graph.levels), faiss)
    faiss.write_index(index, str(copy / "index.faiss"))
    _assert_refused([copy], _refusals([copy]), ["HNSW"])


@pytest.fixture(scope="module")
def sq8_index(small_ontology_path, tmp_path_factory):
    return _dense_index(small_ontology_path, tmp_path_factory, "sq8")


def test_an_sq8_file_without_the_ranges_of_its_quantiser_is_refused(sq8_index, tmp_path):
    """Each dimension's range, which a search decodes the 8-bit codes with, left out (or the quantiser type changed
    to one that keeps no ranges): FAISS readers before 1.15 took the file and a search read past the empty ranges
    (a crash); ontolink writes 8-bit codes with 2 ranges a dimension, and refuses anything else before FAISS reads
    it."""
    dimension = struct.unpack_from("<i", (sq8_index / "index.faiss").read_bytes(), 4)[0]
    ranges = HEADER + 12 + 8 + 8  # the quantiser type, its range statistic and argument, dimension, code size

    def no_ranges(data):
        assert struct.unpack_from("<Q", data, ranges)[0] == 2 * dimension
        return data[:ranges] + struct.pack("<Q", 0) + data[ranges + 8 + 8 * dimension:]

    def direct_codes(data):  # QT_8bit_direct (5): codes are the values, no ranges
        return data[:HEADER] + struct.pack("<i", 5) + data[HEADER + 4:]

    copies = _variants(sq8_index, tmp_path, [no_ranges, direct_codes])
    lines = _refusals([sq8_index] + copies)
    assert lines[0] == "searched"
    _assert_refused(copies, lines[1:], ["quantiser ranges", "quantiser type 5"])


def test_hnsw_neighbours_per_level_that_do_not_grow_are_refused(hnsw_index, tmp_path):
    """The cumulated neighbours per level say where each level's links of a vector start and end: ones that fall
    back (level 1 ending past level 2) make a search read past a vector's links. FAISS readers before 1.15 did
    not check them; ontolink does before FAISS reads the file."""
    data = (hnsw_index / "index.faiss").read_bytes()
    probabilities = struct.unpack_from("<Q", data, HEADER)[0]
    per_level = HEADER + 8 + 8 * probabilities  # the length of the cumulated neighbours per level, then theirs

    def falls_back(data):
        changed = bytearray(data)
        struct.pack_into("<i", changed, per_level + 8 + 4, 1_000_000)  # level 0 ends far past level 1's end
        return bytes(changed)

    copies = _variants(hnsw_index, tmp_path, [falls_back])
    _assert_refused(copies, _refusals(copies), ["neighbours per level"])


@pytest.fixture(scope="module")
def ivfpq_index(small_ontology_path, tmp_path_factory):
    return _dense_index(small_ontology_path, tmp_path_factory, "ivfpq", ivf_nlist=4, pq_m=32, nprobe=4)


def test_inverted_list_sizes_that_add_up_only_past_2_to_the_64_are_refused(ivfpq_index, tmp_path):
    """Two lists declaring 2^63 vectors more each: as 64-bit integers the sizes still add up to the vectors the
    header counts, and FAISS readers before 1.15 resized the lists to them."""
    data = (ivfpq_index / "index.faiss").read_bytes()
    inverted = data.index(b"ilar")
    layout = inverted + 4 + 8 + 8  # after the number of lists and the code size
    assert data[layout:layout + 4] == b"full"
    sizes = layout + 4 + 8

    def wrapped(data):
        changed = bytearray(data)
        for number in (0, 1):
            size = struct.unpack_from("<Q", changed, sizes + 8 * number)[0]
            struct.pack_into("<Q", changed, sizes + 8 * number, size + (1 << 63))
        return bytes(changed)

    copies = _variants(ivfpq_index, tmp_path, [wrapped])
    lines = _refusals([ivfpq_index] + copies)
    assert lines[0] == "searched"
    _assert_refused(copies, lines[1:], ["inverted list sizes"])


def test_a_faiss_file_is_checked_and_read_holding_it_once(tmp_path):
    """A 41 MB flat file: read whole into memory and handed to FAISS as bytes, it was held three times at once (the
    bytes, FAISS's copy of them, the index), 132 MB more at the peak; the walk now skips the vectors and FAISS
    reads the open file into the index, as faiss.read_index does."""
    import faiss

    dimension, count = 256, 40_000
    index = faiss.IndexFlatIP(dimension)
    index.add(np.random.default_rng(0).standard_normal((count, dimension)).astype(np.float32))
    path = tmp_path / "index.faiss"
    faiss.write_index(index, str(path))
    size_mb = path.stat().st_size / 2**20
    peak = """
import sys
from pathlib import Path
from ontolink.indexes.faiss_file import read_checked
def high_water():
    return int(next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1]) / 1024
before = high_water()
index = read_checked(Path(sys.argv[1]), "flat", int(sys.argv[2]), int(sys.argv[3]))
print(index.ntotal, high_water() - before)
"""
    status, stdout, stderr = _child([peak, str(path), str(dimension), str(count)])
    assert status == 0, stderr[-2000:]
    total, grown_mb = stdout.split()
    assert int(total) == count and float(grown_mb) < 1.5 * size_mb, (grown_mb, size_mb)


def test_search_settings_past_the_vectors_are_held_to_them(hnsw_index, ivfpq_index, tmp_path):
    """A manifest's ef_search of 10^12 or nprobe of 10^30 overflowed FAISS's int (an OverflowError, a traceback),
    and one of 10^8 made every HNSW search hold (and zero-fill) 10^8 candidates: 800 MB. More candidates than
    vectors, or lists than there are, find nothing more, so the settings are held to them."""
    from conftest import edit_json

    copies = []
    settings = [(hnsw_index, {"ef_search": 10 ** 12}), (hnsw_index, {"ef_search": 10 ** 8}),
                (ivfpq_index, {"nprobe": 10 ** 30})]
    for number, (index, block) in enumerate(settings):
        copy = tmp_path / f"v{number}"
        shutil.copytree(index, copy)
        edit_json(copy / "manifest.json", lambda manifest: manifest["index"]["faiss"].update(block))
        copies.append(copy)
    peak = "\nprint(next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')), flush=True)"
    status, stdout, stderr = _child([LOADS + peak, str(TESTS), *map(str, copies)])
    assert status == 0, stderr[-2000:]
    lines = stdout.splitlines()
    assert lines[:3] == ["searched"] * 3
    assert int(lines[3].split()[1]) / 1024 < 500, lines[3]  # kB
