# DO NOT MERGE — validation seed.

# SEED 1 [BLOCKER] (ops/public-bucket) the bucket is readable by anyone
resource "aws_s3_bucket_acl" "reports" {
  bucket = "acme-reports"
  acl    = "public-read"
}

variable "region" {} // SEED 2 [SUGGESTION] (ops/missing-description) no description
