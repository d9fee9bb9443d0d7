#!/usr/bin/env bash
# Fills corpus/<target>/ with seeds: the shipped presets and the bad-file corpus for the
# design loader and the RON tree, and typical command lines (NUL-separated) for cli_args.
# Run from anywhere; existing corpus files are kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

for target in design_loader ron_tree; do
    mkdir -p "$here/corpus/$target"
    cp "$root"/presets/*.ron "$here/corpus/$target/"
    for f in "$root"/tests/bad_files/*; do
        cp "$f" "$here/corpus/$target/bad-$(basename "$f")"
    done
done

mkdir -p "$here/corpus/cli_args"
i=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    # One argument per word, NUL between them, as argv holds them.
    printf '%s' "$line" | tr ' ' '\0' > "$here/corpus/cli_args/seed-$i"
    i=$((i + 1))
done <<'LINES'
generate rail-optimized --nodes 32 -o out.ron
generate fat-tree --nodes 512 --tiers 3 --oversubscription 2 -o -
generate rail-only --nodes 16 --node hgx-h100 --nic cx7-400gbe --switch sn5600 -o -
generate star --nodes 4 --node workstation --gpu rtx-4090 --gpus-per-node 4 --pcie-gen 4 --nvlink-bridge -o x.ron
generate mesh --nodes 4 --node mac-studio-m3-ultra --link tb5 --transport rdma -o -
generate nvl72 --nodes 8 --nics-per-node 4 -o -
generate single -o -
generate ring --nodes 262145 -o -
eval design.ron --json --size 8GiB --op all-gather --algo nvls-tree --routing adaptive --gpus 16
eval design.ron
sweep design.ron --json --op reduce-scatter --algo ring
bom design.ron -o bom.csv --currency EUR --discount 0.15
compare a.ron b.ron c.ron --markdown --size 64K --baseline 2
compare a.ron b.ron --csv
catalog --json
--catalog parts.ron eval design.ron
--help
generate --help
--version
design.ron
LINES
echo "seeded $(ls "$here/corpus/design_loader" | wc -l) design files and $i command lines"
