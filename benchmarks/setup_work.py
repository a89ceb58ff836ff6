"""What the benchmark scripts share before they measure: the shared data check, the working folder, an HPO
index. Run as `python benchmarks/NAME.py`, a script finds this module beside it."""

import subprocess
import sys
from pathlib import Path

from results_file import nothing_measured

ONTOLINK = [sys.executable, "-m", "ontolink"]


def working_folder(workdir, *required):
    """The created ``workdir``, or None (said on stdout) when a required shared data file is absent."""
    absent = [str(path) for path in required if not Path(path).exists()]
    if absent:
        nothing_measured(f"{absent[0]} is absent (the project's shared data sits beside the repository); nothing to do")
        return None
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    return work


def hpo_index(path, ontology="hpo"):
    """``path``, holding a default index of ``ontology`` (`ontolink index --ontology hpo`) built there if absent."""
    path = Path(path)
    if not (path / "manifest.json").exists():
        subprocess.run(ONTOLINK + ["index", "--ontology", str(ontology), str(path)], check=True)
    return path
