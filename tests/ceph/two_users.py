# SPDX-License-Identifier: MIT
"""GW-2 against a real store: two users of hipobj-gateway, each mapped to
its own RGW user by the credentials file, are kept apart by RGW itself:
Bob cannot list, read, overwrite or delete Alice's bucket and objects, and
each sees only their own buckets. Usage: two_users.py --gw URL; the two
gateway users' keys in the environment (ALICE_KEY, ALICE_SECRET, BOB_KEY,
BOB_SECRET)."""
import argparse
import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def client(url, ak, sk):
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ak,
                        aws_secret_access_key=sk, region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def status_of(fn, **kw):
    try:
        fn(**kw)
        return 200
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gw", required=True)
    a = ap.parse_args()
    alice = client(a.gw, os.environ["ALICE_KEY"], os.environ["ALICE_SECRET"])
    bob = client(a.gw, os.environ["BOB_KEY"], os.environ["BOB_SECRET"])
    ab, bb = "alice-%d" % os.getpid(), "bob-%d" % os.getpid()
    alice.create_bucket(Bucket=ab)
    alice.put_object(Bucket=ab, Key="secret", Body=b"alice's")
    bob.create_bucket(Bucket=bb)
    bob.put_object(Bucket=bb, Key="mine", Body=b"bob's")
    fails = []

    def check(cond, what):
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            fails.append(what)

    names = [b["Name"] for b in bob.list_buckets()["Buckets"]]
    check(bb in names and ab not in names, "Bob lists only his buckets")
    names = [b["Name"] for b in alice.list_buckets()["Buckets"]]
    check(ab in names and bb not in names, "Alice lists only hers")
    check(status_of(bob.get_object, Bucket=ab, Key="secret") == 403,
          "Bob cannot read Alice's object")
    check(status_of(bob.list_objects_v2, Bucket=ab) == 403,
          "Bob cannot list Alice's bucket")
    check(status_of(bob.put_object, Bucket=ab, Key="secret",
                    Body=b"bob was here") == 403,
          "Bob cannot overwrite Alice's object")
    check(status_of(bob.delete_object, Bucket=ab, Key="secret") in (403,),
          "Bob cannot delete Alice's object")
    check(status_of(bob.delete_bucket, Bucket=ab) == 403,
          "Bob cannot delete Alice's bucket")
    got = alice.get_object(Bucket=ab, Key="secret")["Body"].read()
    check(got == b"alice's", "Alice's object is intact")
    check(bob.get_object(Bucket=bb, Key="mine")["Body"].read() == b"bob's",
          "Bob reads his own")
    for c, b, k in ((alice, ab, "secret"), (bob, bb, "mine")):
        c.delete_object(Bucket=b, Key=k)
        c.delete_bucket(Bucket=b)
    if fails:
        print("FAIL: %d checks" % len(fails))
        return 1
    print("two users apart: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
