#!/bin/sh
# Fills the empty store DATABASE_URL (the one argument) with real runs of the evalkit on PATH:
# prompt runs of evalkit.smoke (answered by its own references), of the starter set through a
# recorded provider and then a regression of it, two retrieval runs, a baseline accepted on
# purpose, and one shard of a sharded run (the run stays running; its lease row stays, done).
set -eu
DB="$1"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/project"
USER=release-tester; export USER
ek() { evalkit --database "$DB" "$@" >/dev/null; }
cd "$WORK"
ek run evalkit.smoke --privacy full --label "first run" --run-id smoke-1
ek run evalkit.smoke --privacy redacted --run-id smoke-2
ek retrieval evalkit_stdlib.docs evalkit.lexical --deployment demo --privacy full
ek retrieval evalkit_stdlib.docs evalkit.lexical --deployment demo
ek baseline accept smoke-1 --reason "the reference answers, accepted on purpose"
ek run evalkit.smoke --privacy metadata --shard 1/2 --run-id smoke-sharded
cd "$WORK/project"
evalkit init >/dev/null
ek run starter.faq --provider recorded --privacy full --run-id faq-1
# evalkit init writes the recorded answers to evals/ (the released version) or recorded/ (later)
sed -i 's/"Paris"/"Lyon"/' $(ls evals/example-answers.jsonl recorded/example-answers.jsonl 2>/dev/null)
ek run starter.faq --provider recorded --privacy full --run-id faq-2 || test $? = 1   # regressed: exit 1
