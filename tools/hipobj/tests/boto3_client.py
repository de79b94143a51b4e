# SPDX-License-Identifier: MIT
"""boto3 as the other S3 client of the interop test.

    boto3_client.py ENDPOINT put FILE BUCKET KEY [PART_SIZE]
    boto3_client.py ENDPOINT get BUCKET KEY FILE
    boto3_client.py ENDPOINT etag BUCKET KEY
    boto3_client.py ENDPOINT mkbucket BUCKET

Keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when set, else
requests are unsigned. PART_SIZE makes put a multipart upload (boto3's
transfer manager) in parts of that many bytes."""
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore import UNSIGNED
from botocore.config import Config


def client(endpoint):
    signed = bool(os.environ.get("AWS_ACCESS_KEY_ID"))
    cfg = Config(s3={"addressing_style": "path"},
                 signature_version="s3v4" if signed else UNSIGNED,
                 retries={"max_attempts": 1})
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        config=cfg)


def main(argv):
    s3 = client(argv[1])
    op = argv[2]
    if op == "put":
        path, bucket, key = argv[3:6]
        if len(argv) > 6:
            part = int(argv[6])
            tc = TransferConfig(multipart_threshold=part, multipart_chunksize=part)
            s3.upload_file(path, bucket, key, Config=tc)
        else:
            with open(path, "rb") as f:
                s3.put_object(Bucket=bucket, Key=key, Body=f.read())
    elif op == "get":
        bucket, key, path = argv[3:6]
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with open(path, "wb") as f:
            f.write(body)
    elif op == "etag":
        print(s3.head_object(Bucket=argv[3], Key=argv[4])["ETag"])
    elif op == "mkbucket":
        s3.create_bucket(Bucket=argv[3])
    else:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
