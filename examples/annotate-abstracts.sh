#!/usr/bin/env bash
# Find HPO phenotypes in raw abstracts and print "document  span  id  name", one mention a line.
#   examples/annotate-abstracts.sh abstracts.txt          # one abstract a line: "ID<TAB>text" or just text
#   echo "She had seizures and an enlarged liver." | examples/annotate-abstracts.sh
#   examples/annotate-abstracts.sh abstracts.txt kept.jsonl   # names of your own too: Aliases records
#                                                              # ({"id", "aliases"}: gen-aliases | filter, a lexicon)
# ONTOLINK_INDEX names the index `link` uses (built on first use; with an alias file, a second one beside it
# that holds the aliases too); ONTOLINK_WORDNET a WordNet database (e.g. /usr/share/wordnet from Debian's
# wordnet-base) whose adjectives annotate reads too ("otic": ear).
set -euo pipefail
index=${ONTOLINK_INDEX:-idx/hpo}
aliases=()
if [ -n "${2:-}" ]; then
  aliases=(--aliases "$2")
  # the aliases' digest names the index: another or an edited file gets an index of its own
  index="$index-aliases-$(sha256sum < "$2" | cut -c1-12)"
fi
# ${aliases[@]+...}: an empty array under `set -u` is an unbound variable to bash before 4.4 (macOS's 3.2)
[ -f "$index/manifest.json" ] || ontolink index --ontology hpo ${aliases[@]+"${aliases[@]}"} "$index"
ontolink annotate --ontology hpo --roots HP:0000118 ${aliases[@]+"${aliases[@]}"} -i "${1:--}" --from text \
  | ontolink link --index "$index" --top-k 1 \
  | python3 -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    best = record["candidates"][0] if record.get("candidates") else {"id": "-", "name": "(no candidate)"}
    print("%s\t%s\t%s\t%s" % (record["doc_id"], record["mention"], best["id"], best["name"]))'
