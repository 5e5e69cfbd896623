"""Drives one multipart upload with boto3's low-level calls, step by step,
so a test can look at the disk between the steps.
Usage: boto3_multipart.py ENDPOINT BUCKET KEY FILE PART_BYTES
It uploads every part of FILE, prints "parts N" and waits for a line on
stdin: "complete" completes the upload, "abort" aborts it; then it prints
"done"."""
import sys

import boto3

endpoint, bucket, key, path, part_bytes = sys.argv[1:6]
part_bytes = int(part_bytes)
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
parts = []
with open(path, "rb") as f:
    while True:
        chunk = f.read(part_bytes)
        if not chunk:
            break
        n = len(parts) + 1
        etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=n, Body=chunk)["ETag"]
        parts.append({"PartNumber": n, "ETag": etag})
listed = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
assert any(u["UploadId"] == upload_id for u in listed), listed
print("parts", len(parts), flush=True)
step = sys.stdin.readline().strip()
if step == "complete":
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
elif step == "abort":
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    left = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert not any(u["UploadId"] == upload_id for u in left), left
else:
    sys.exit("unknown step %r" % step)
print("done", flush=True)
