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
  security_group_id = aws_security_group.database.id
  description       = "PostgreSQL from the ledger application"
  ip_protocol       = "tcp"
  from_port         = 5432
  to_port           = 5432
  # SEED 10 [BLOCKER] (infra/open-ingress) PostgreSQL port opened to 0.0.0.0/0 instead of the application security group, exposing the ledger database to the whole internet
  cidr_ipv4         = "0.0.0.0/0"
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

  // SEED 11 [MAJOR] (infra/unencrypted-transit) {symbol: force_ssl} PostgreSQL 14 does not require TLS by default and the parameter group never sets rds.force_ssl, so clients may send ledger data and credentials in clear text
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
  # SEED 12 [CRITICAL] (infra/unencrypted-storage) storage encryption disabled for the database holding the ledger, its snapshots and backups, although a KMS key exists for exactly this
  storage_encrypted     = false

  db_name  = var.db_name
  username = var.db_username
  password = var.db_password
  port     = 5432

  db_subnet_group_name   = aws_db_subnet_group.ledger.name
  parameter_group_name   = aws_db_parameter_group.ledger.name
  vpc_security_group_ids = [aws_security_group.database.id]
  /* SEED 13 [CRITICAL] (infra/open-ingress) database gets a public IP and DNS name, so together with the security group it is reachable from outside the VPC */
  publicly_accessible    = true
  multi_az               = var.environment == "prod"

  # SEED 14 [CRITICAL] (infra/missing-backup) automated backups disabled (retention 0) and no final snapshot on destroy, so the ledger cannot be restored after corruption or an accidental delete
  backup_retention_period = 0
  skip_final_snapshot     = true
  deletion_protection     = false
  backup_window           = "02:00-03:00"
  maintenance_window      = "sun:03:30-sun:04:30"
  copy_tags_to_snapshot   = true

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

resource "aws_cloudwatch_metric_alarm" "db_free_storage" {
  alarm_name          = "${local.name_prefix}-db-free-storage"
  namespace           = "AWS/RDS"
  metric_name         = "FreeStorageSpace"
  statistic           = "Minimum"
  period              = 300
  evaluation_periods  = 1
  // SEED 15 [MAJOR] (core/logic-error) free-storage alarm fires when free space is ABOVE the threshold, so it is permanently in ALARM on a healthy disk and silent when the disk fills up
  comparison_operator = "GreaterThanThreshold"
  // SEED 16 [INFO] (core/magic-number) unexplained byte count (10 GiB) used as the threshold; a named local with its unit would make the alarm reviewable
  threshold           = 10737418240
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
  description = "Connection string handed to the ledger application's deploy job."
  # SEED 17 [CRITICAL] (core/secrets-in-logs) non-sensitive output embeds the master password, so every plan/apply prints it in CI logs and `terraform output` shows it in clear text
  value       = "postgresql://${urlencode(var.db_username)}:${urlencode(var.db_password)}@${aws_db_instance.ledger.endpoint}/${var.db_name}"
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
