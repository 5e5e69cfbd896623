"""Uploads a trace directory with boto3 the way a profiler's uploader does:
data files first (boto3's managed transfer, multipart above 8 MiB), then
metadata.json. Usage: boto3_upload.py ENDPOINT BUCKET PREFIX DIR
Keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY."""
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig

endpoint, bucket, prefix, root = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
cfg = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20, max_concurrency=4)
files = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    for name in filenames:
        if not name.startswith("."):
            files.append(os.path.relpath(os.path.join(dirpath, name), root))
files.sort(key=lambda rel: rel == "metadata.json")
for rel in files:
    s3.upload_file(os.path.join(root, rel), bucket, prefix + "/" + rel.replace(os.sep, "/"), Config=cfg)
    print("uploaded", rel, flush=True)
