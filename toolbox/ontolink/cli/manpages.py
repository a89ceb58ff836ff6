"""Write man/ from the click command definitions (click-man), so the pages cannot drift.

    python -m ontolink.cli.manpages [DIRECTORY]

tests/test_man.py regenerates the pages and fails when man/ is stale.
"""

import sys
from pathlib import Path

from ontolink.cli.main import cli
from ontolink.version import __version__

# A fixed date keeps the pages byte-identical between runs; bump it with the version.
MAN_DATE = "2026-11-29"

EXIT_STATUS = r"""
.SH EXIT STATUS
.TP
.B 0
Success.
.TP
.B 1
A failure that is not the input's fault (a model that cannot be loaded, an unreachable endpoint).
.TP
.B 2
Bad input or usage: one line on stderr, \fIFILE\fP:\fILINE\fP: \fImessage\fP; records written before it are kept.
.TP
.B 130
Interrupted (Ctrl-C); an artifact being written is left as it was.
.TP
.B 141
The reader of the output went away (for example \fB| head\fP); nothing is printed.
.TP
.B 143
Terminated (SIGTERM); an output file is closed whole, holding the records written before the signal.
"""

ENVIRONMENT = r"""
.SH ENVIRONMENT
.TP
.B ONTOLINK_CACHE_DIR
Where parsed ontologies, LLM replies, the exported ONNX encoder and name vectors are cached (default: the user cache directory, e.g. ~/.cache/ontolink).
.TP
.B OMP_NUM_THREADS
CPU threads: the ONNX encoder runs this many single\-threaded sessions side by side, and the flat search sorts on as many threads (default: the cores this process may use).
.TP
.B ONTOLINK_TRACEBACK
When set, errors show a Python traceback instead of one line.
.TP
.B ONTOLINK_MAX_LINE_BYTES
The longest input line read, and the highest BioC offset accepted (default 64M; K, M, G suffixes): a longer line is bad input.
.TP
.B ONTOLINK_MAX_INFLATION
How many times its size a .gz file read whole (an ontology, a config file) may inflate to, past 64 MiB (default 100): more is refused as a likely gzip bomb.
.TP
.B ONTOLINK_LINK_MEMO_BYTES
Memory kept for search results of mentions seen before (default 64M; 0: none).
.TP
.B ONTOLINK_TRAIN_PRECISION
The precision every trainer runs at: fp32, or on a GPU fp16 or bf16 (default: bf16 on GPUs that have it, fp16 on older ones, fp32 on a CPU).
.TP
.B ONTOLINK_DUPLICATE_IDS_BYTES
Memory kept to report duplicate record ids (default 64M): past it, later ids are checked against those recorded, not recorded, and the summary says so.
.TP
.B HF_HUB_OFFLINE
When set to 1, a Hugging Face hub model is only loaded from the Hugging Face cache; the hub is never asked (a model already in the cache is loaded from it without asking in any case).
.TP
.B OPENAI_BASE_URL, OPENAI_API_KEY
gen\-aliases \-\-backend openai: the endpoint and its key (\-\-api\-key\-env names another variable).
.TP
.B CUDA_VISIBLE_DEVICES
The GPUs \-\-device auto and cuda:N choose among.
"""


def _unwrapped_examples(page):
    """click's ``\\b`` paragraphs (examples) as no-fill blocks, so man does not join their lines."""
    lines, in_block = [], False
    for line in page.split("\n"):
        if line == "\b":
            lines.append(".nf")
            in_block = True
            continue
        if in_block and (line.startswith(".PP") or line.startswith(".SH")):
            lines.append(".fi")
            in_block = False
        lines.append(line.replace("\\", "\\e") if in_block else line)
    return "\n".join(lines)


def _see_also(name, all_names):
    others = [other.replace("-", "\\-") for other in all_names if other != name]
    return "\n.SH SEE ALSO\n" + ", ".join(rf"\fB{other}\fP(1)" for other in others) + "\n"


def write_man_pages(directory):
    from click_man.core import write_man_pages as click_man_write

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    click_man_write("ontolink", cli, version=__version__, target_dir=str(directory), date=MAN_DATE)
    pages = sorted(directory.glob("*.1"))
    names = [page.stem for page in pages]
    for page in pages:
        text = _unwrapped_examples(page.read_text(encoding="utf-8")).rstrip("\n") + "\n"
        page.write_text(text + EXIT_STATUS.lstrip("\n") + ENVIRONMENT.lstrip("\n")
                        + _see_also(page.stem, names).lstrip("\n"), encoding="utf-8")
    return pages


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "man"
    for page in write_man_pages(target):
        print(page)
