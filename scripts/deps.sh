#!/usr/bin/env bash
# Installs what Cascade's build and tests need beyond Go, from Debian's
# packages, when it is missing: xz (the post-processor's fast path), zstd
# (the reference decoder a test checks .tracez frames with), Node
# and npm (the web UI), Chromium (the UI's browser tests), the S3 clients
# users upload traces with, which the S3 endpoint's tests run: the AWS CLI,
# rclone and Python's boto3; and Slurm with munge and MariaDB (the Slurm
# client's tests). Idempotent.
set -euo pipefail
need=()
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v aws >/dev/null || need+=(awscli)
command -v rclone >/dev/null || need+=(rclone)
python3 -c 'import boto3' 2>/dev/null || need+=(python3-boto3)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# Slurm, munge and MariaDB for the Slurm client's tests (slurm/), which start
# a one-node cluster with scripts/slurm.sh; without them those tests skip.
if ! "$(dirname "$0")/slurm.sh" install; then
  echo "warning: Slurm's packages cannot be installed; the Slurm tests (slurm/) will be skipped" >&2
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "warning: Node $(node --version 2>/dev/null) is older than 20; the web UI's build (Vite 8) needs Node 20 or newer" >&2
fi
