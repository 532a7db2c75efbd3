#!/usr/bin/env bash
# Submits a study as a Slurm job array of SHARDS tasks and a merge job that runs once every
# task has succeeded:
#
#   deploy/slurm/submit.sh SHARDS STUDY [agora run options]
#
# e.g. `deploy/slurm/submit.sh 8 scenarios/studies/classical.ron --models models.ron`. Extra
# sbatch options (partition, account, QOS) go in SBATCH_* variables, which sbatch reads, e.g.
# SBATCH_PARTITION=gpu SBATCH_ACCOUNT=myproject deploy/slurm/submit.sh 8 study.ron
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
shards=${1:?usage: submit.sh SHARDS STUDY [agora run options]}
shift
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "error: SHARDS must be a positive integer, got '$shards'" >&2; exit 2; }

jid=$(sbatch --parsable --array="0-$((shards - 1))" "$here/agora-array.sbatch" "$@")
jid=${jid%%;*}
echo "array job $jid: $shards shards into ${AGORA_STORE_DIR:-shards}/"
sbatch --dependency="afterok:$jid" "$here/agora-merge.sbatch" "$shards"
