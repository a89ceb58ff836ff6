#!/usr/bin/env bash
# Link free-text phenotype phrases to HPO and print "phrase -> best entity (score)".
#   examples/link-phrases.sh "big liver" "short stature" "loss of vision"
set -euo pipefail
index=${ONTOLINK_INDEX:-idx/hpo}
[ -f "$index/manifest.json" ] || ontolink index --ontology hpo "$index"
for phrase in "$@"; do
  python3 -c 'import json, sys; print(json.dumps({"id": sys.argv[1], "mention": sys.argv[1]}))' "$phrase"
done \
  | ontolink link --index "$index" --top-k 3 \
  | python3 -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    best = ", ".join("%s %s (%.2f)" % (c["id"], c["name"], c["score"]) for c in record["candidates"])
    print("%-16s -> %s" % (record["mention"], best))'
