/*
 * IAM and KMS for the ledger service:
 *   - the customer-managed key that encrypts statements and the database,
 *   - the ECS task role of the ledger application,
 *   - the role the finance team's reporting tool assumes to read exports,
 *   - the role GitHub Actions assumes to deploy new task definitions.
 */

data "aws_caller_identity" "current" {}

data "aws_iam_openid_connect_provider" "github" {
  url = "https://token.actions.githubusercontent.com"
}

resource "aws_kms_key" "ledger" {
  description             = "Encrypts ledger statements and database storage"
  deletion_window_in_days = 30
  enable_key_rotation     = true
}

resource "aws_kms_alias" "ledger" {
  name          = "alias/${local.name_prefix}"
  target_key_id = aws_kms_key.ledger.key_id
}

/* ---- Application task role ---- */

data "aws_iam_policy_document" "ecs_tasks_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "ledger_task" {
  name               = "${local.name_prefix}-task"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

data "aws_iam_policy_document" "ledger_task" {
  statement {
    sid       = "StatementObjects"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = ["${aws_s3_bucket.documents.arn}/*"]
  }

  statement {
    sid       = "ExportWriter"
    actions   = ["s3:PutObject", "s3:GetObject"]
    resources = ["${aws_s3_bucket.exports.arn}/*"]
  }

  statement {
    sid       = "LedgerKey"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
    resources = [aws_kms_key.ledger.arn]
  }

  /* The application connects as its own database role with an IAM token: no password, never the master user. */
  statement {
    sid       = "DatabaseConnect"
    actions   = ["rds-db:connect"]
    resources = ["arn:aws:rds-db:${var.aws_region}:${data.aws_caller_identity.current.account_id}:dbuser:${aws_db_instance.ledger.resource_id}/${var.db_app_username}"]
  }
}

resource "aws_iam_role_policy" "ledger_task" {
  name   = "ledger-app"
  role   = aws_iam_role.ledger_task.id
  policy = data.aws_iam_policy_document.ledger_task.json
}

/* ---- Finance reporting (cross-account, read-only) ---- */

data "aws_iam_policy_document" "finance_assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "AWS"
      # BORDERLINE 7 the whole finance account is trusted with no ExternalId; that is standard delegation to an account the company runs, but a confused-deputy risk if the reporting tool is a third-party service, and who operates that account is outside this diff
      identifiers = ["arn:aws:iam::${var.finance_account_id}:root"]
    }
  }
}

resource "aws_iam_role" "finance_reporting" {
  name                 = "${local.name_prefix}-finance-reporting"
  assume_role_policy   = data.aws_iam_policy_document.finance_assume.json
  max_session_duration = 3600
}

data "aws_iam_policy_document" "finance_reporting" {
  statement {
    sid       = "ListExports"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.exports.arn]
  }

  statement {
    sid       = "ReadExports"
    actions   = ["s3:GetObject"]
    resources = ["${aws_s3_bucket.exports.arn}/*"]
  }
}

resource "aws_iam_role_policy" "finance_reporting" {
  name   = "read-exports"
  role   = aws_iam_role.finance_reporting.id
  policy = data.aws_iam_policy_document.finance_reporting.json
}

/* ---- CI deploy role (GitHub Actions OIDC) ---- */

data "aws_iam_policy_document" "github_assume" {
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]

    principals {
      type        = "Federated"
      identifiers = [data.aws_iam_openid_connect_provider.github.arn]
    }

    condition {
      test     = "StringEquals"
      variable = "token.actions.githubusercontent.com:sub"
      values   = ["repo:${var.github_repository}:environment:${var.environment}"]
    }

    condition {
      test     = "StringEquals"
      variable = "token.actions.githubusercontent.com:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "github_deploy" {
  name                 = "${local.name_prefix}-github-deploy"
  assume_role_policy   = data.aws_iam_policy_document.github_assume.json
  max_session_duration = 3600
}

data "aws_iam_policy_document" "github_deploy" {
  statement {
    sid       = "EcrAuth"
    actions   = ["ecr:GetAuthorizationToken"]
    resources = ["*"]
  }

  # BORDERLINE 8 the image repository is named by service, not by environment, so a staging deploy role could push to the repository prod pulls from if both stacks shared one account; whether environments live in separate accounts is outside this diff
  statement {
    sid = "EcrPush"
    actions = [
      "ecr:BatchCheckLayerAvailability",
      "ecr:InitiateLayerUpload",
      "ecr:UploadLayerPart",
      "ecr:CompleteLayerUpload",
      "ecr:PutImage",
    ]
    resources = ["arn:aws:ecr:${var.aws_region}:${data.aws_caller_identity.current.account_id}:repository/${var.service_name}"]
  }

  /* RegisterTaskDefinition does not support resource-level permissions. */
  statement {
    sid       = "RegisterTaskDefinition"
    actions   = ["ecs:RegisterTaskDefinition"]
    resources = ["*"]
  }

  statement {
    sid       = "EcsDeploy"
    actions   = ["ecs:UpdateService", "ecs:DescribeServices"]
    resources = ["arn:aws:ecs:${var.aws_region}:${data.aws_caller_identity.current.account_id}:service/${local.name_prefix}/${var.service_name}"]
  }

  statement {
    sid       = "PassTaskRole"
    actions   = ["iam:PassRole"]
    # BORDERLINE 3 only the task role can be passed; task definitions that also name an execution role (Fargate pulling from private ECR) would need it here, and the launch type and execution role live outside this diff
    resources = [aws_iam_role.ledger_task.arn]
  }
}

resource "aws_iam_role_policy" "github_deploy" {
  name   = "deploy"
  role   = aws_iam_role.github_deploy.id
  policy = data.aws_iam_policy_document.github_deploy.json
}
