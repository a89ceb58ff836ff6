#!/usr/bin/env bash
# Find HPO phenotypes in raw abstracts and print "document  span  id  name", one mention a line.
#   examples/annotate-abstracts.sh abstracts.txt          # one abstract a line: "ID<TAB>text" or just text
#   echo "She had seizures and an enlarged liver." | examples/annotate-abstracts.sh
# ONTOLINK_INDEX names the index `link` uses (built on first use); ONTOLINK_WORDNET a WordNet database
# (e.g. /usr/share/wordnet from Debian's wordnet-base) whose adjectives annotate reads too ("otic": ear).
set -euo pipefail
index=${ONTOLINK_INDEX:-idx/hpo}
[ -f "$index/manifest.json" ] || ontolink index --ontology hpo "$index"
ontolink annotate --ontology hpo --roots HP:0000118 -i "${1:--}" --from text \
  | ontolink link --index "$index" --top-k 1 \
  | python3 -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    best = record["candidates"][0] if record.get("candidates") else {"id": "-", "name": "(no candidate)"}
    print("%s\t%s\t%s\t%s" % (record["doc_id"], record["mention"], best["id"], best["name"]))'
