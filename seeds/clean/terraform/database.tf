# PostgreSQL database of the ledger service, its network access and alarms.

resource "aws_security_group" "database" {
  name        = "${local.name_prefix}-db"
  description = "Ledger PostgreSQL"
  vpc_id      = var.vpc_id

  tags = {
    Name = "${local.name_prefix}-db"
  }
}

resource "aws_vpc_security_group_ingress_rule" "database_postgres" {
  security_group_id            = aws_security_group.database.id
  description                  = "PostgreSQL from the ledger application"
  ip_protocol                  = "tcp"
  from_port                    = 5432
  to_port                      = 5432
  referenced_security_group_id = var.app_security_group_id
}

resource "aws_vpc_security_group_egress_rule" "database_all" {
  security_group_id = aws_security_group.database.id
  description       = "Responses and outbound traffic inside the VPC"
  ip_protocol       = "-1"
  cidr_ipv4         = var.vpc_cidr
}

resource "aws_db_subnet_group" "ledger" {
  name       = "${local.name_prefix}-db"
  subnet_ids = var.private_subnet_ids
}

resource "aws_db_parameter_group" "ledger" {
  name   = "${local.name_prefix}-pg14"
  family = "postgres14"

  parameter {
    name  = "rds.force_ssl"
    value = "1"
  }

  parameter {
    name  = "log_min_duration_statement"
    value = "500"
  }

  parameter {
    name  = "log_connections"
    value = "1"
  }

  parameter {
    name         = "shared_preload_libraries"
    value        = "pg_stat_statements"
    apply_method = "pending-reboot"
  }
}

resource "aws_db_instance" "ledger" {
  identifier     = "${local.name_prefix}-db"
  engine         = "postgres"
  engine_version = "14"
  instance_class = var.db_instance_class

  allocated_storage     = var.db_allocated_storage_gb
  max_allocated_storage = var.db_allocated_storage_gb * 4
  storage_type          = "gp3"
  storage_encrypted     = true
  kms_key_id            = aws_kms_key.ledger.arn

  db_name  = var.db_name
  username = var.db_username
  port     = 5432

  # RDS generates the master password and keeps it (rotated) in Secrets Manager, so it never
  # passes through Terraform: neither the plan, the state nor any output holds it.
  manage_master_user_password   = true
  master_user_secret_kms_key_id = aws_kms_key.ledger.arn

  # The application authenticates as var.db_app_username with IAM tokens (see the task role).
  iam_database_authentication_enabled = true

  db_subnet_group_name   = aws_db_subnet_group.ledger.name
  parameter_group_name   = aws_db_parameter_group.ledger.name
  vpc_security_group_ids = [aws_security_group.database.id]
  publicly_accessible    = false
  multi_az               = var.environment == "prod"

  backup_retention_period   = 14
  skip_final_snapshot       = false
  final_snapshot_identifier = "${local.name_prefix}-db-final"
  deletion_protection       = true
  backup_window             = "02:00-03:00"
  maintenance_window        = "sun:03:30-sun:04:30"
  copy_tags_to_snapshot     = true

  auto_minor_version_upgrade      = true
  enabled_cloudwatch_logs_exports = ["postgresql", "upgrade"]
  performance_insights_enabled    = true
  performance_insights_kms_key_id = aws_kms_key.ledger.arn

  # BORDERLINE 1 modifications restart the instance right away instead of in the maintenance window; acceptable only if the team's change process schedules applies
  apply_immediately = true
}

resource "aws_cloudwatch_metric_alarm" "db_cpu" {
  alarm_name          = "${local.name_prefix}-db-cpu"
  namespace           = "AWS/RDS"
  metric_name         = "CPUUtilization"
  statistic           = "Average"
  period              = 300
  evaluation_periods  = 3
  comparison_operator = "GreaterThanThreshold"
  threshold           = 80
  alarm_actions       = [var.alarm_topic_arn]
  ok_actions          = [var.alarm_topic_arn]

  dimensions = {
    DBInstanceIdentifier = aws_db_instance.ledger.identifier
  }
}

locals {
  # Alert when less than 10 GiB of storage is left.
  db_free_storage_alarm_bytes = 10 * 1024 * 1024 * 1024
}

resource "aws_cloudwatch_metric_alarm" "db_free_storage" {
  alarm_name          = "${local.name_prefix}-db-free-storage"
  namespace           = "AWS/RDS"
  metric_name         = "FreeStorageSpace"
  statistic           = "Minimum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "LessThanThreshold"
  threshold           = local.db_free_storage_alarm_bytes
  alarm_actions       = [var.alarm_topic_arn]
  ok_actions          = [var.alarm_topic_arn]

  dimensions = {
    DBInstanceIdentifier = aws_db_instance.ledger.identifier
  }
}

output "database_endpoint" {
  description = "Host and port of the ledger database."
  value       = aws_db_instance.ledger.endpoint
}

output "database_url" {
  description = "Connection string for the ledger application: its own role, authenticated with an IAM token (rds-db:connect on the task role), so no password is involved."
  sensitive   = true
  value       = "postgresql://${urlencode(var.db_app_username)}@${aws_db_instance.ledger.endpoint}/${var.db_name}?sslmode=verify-full"
}

output "database_master_secret_arn" {
  description = "ARN of the Secrets Manager secret in which RDS keeps the master user's password, for the migration job that creates the application's role; the application never reads it."
  value       = aws_db_instance.ledger.master_user_secret[0].secret_arn
}

output "documents_bucket" {
  description = "Name of the customer statements bucket."
  value       = aws_s3_bucket.documents.bucket
}

output "exports_bucket" {
  description = "Name of the monthly exports bucket."
  value       = aws_s3_bucket.exports.bucket
}

output "task_role_arn" {
  description = "ARN of the ledger application's ECS task role."
  value       = aws_iam_role.ledger_task.arn
}
