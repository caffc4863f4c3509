# Ledger service: shared provider configuration, inputs and common tags.

terraform {
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
    random = {
      source  = "hashicorp/random"
      version = "~> 3.6"
    }
  }

  # BORDERLINE 5 one fixed state key for a configuration that takes environment = staging|prod; correct only if CI selects a workspace or passes -backend-config per environment, which happens outside this diff
  backend "s3" {
    bucket         = "acme-terraform-state-prod"
    key            = "ledger/terraform.tfstate"
    region         = "eu-central-1"
    dynamodb_table = "terraform-locks"
    encrypt        = true
  }
}

provider "aws" {
  region = var.aws_region

  default_tags {
    tags = local.common_tags
  }
}

variable "aws_region" {
  description = "AWS region the ledger stack is deployed to."
  type        = string
  default     = "eu-central-1"
}

variable "environment" {
  description = "Deployment environment name (staging or prod)."
  type        = string

  validation {
    condition     = contains(["staging", "prod"], var.environment)
    error_message = "The environment must be either \"staging\" or \"prod\"."
  }
}

variable "service_name" {
  description = "Short service name used as a prefix for resource names."
  type        = string
  default     = "ledger"
}

variable "vpc_id" {
  description = "ID of the VPC the database and application run in."
  type        = string
}

variable "vpc_cidr" {
  description = "CIDR block of the VPC, used for internal ingress rules."
  type        = string
  default     = "10.40.0.0/16"
}

variable "private_subnet_ids" {
  description = "Private subnet IDs for the database subnet group (at least two AZs)."
  type        = list(string)

  validation {
    condition     = length(var.private_subnet_ids) >= 2
    error_message = "Provide private subnets in at least two availability zones."
  }
}

variable "app_security_group_id" {
  description = "Security group attached to the ledger application tasks."
  type        = string
}

variable "db_instance_class" {
  description = "Instance class of the PostgreSQL database."
  type        = string
  default     = "db.t4g.large"
}

variable "db_allocated_storage_gb" {
  description = "Initial allocated storage of the database, in GiB."
  type        = number
  default     = 100
}

variable "db_name" {
  description = "Name of the application database."
  type        = string
  default     = "ledger"
}

variable "db_username" {
  description = "Master user name of the database."
  type        = string
  default     = "ledger_admin"
}

variable "db_app_username" {
  description = "Database role the application connects as (IAM authentication, rds_iam granted by the migration job)."
  type        = string
  default     = "ledger_app"

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_]{0,62}$", var.db_app_username))
    error_message = "db_app_username must be a PostgreSQL role name."
  }
}

variable "github_repository" {
  description = "GitHub repository (owner/name) allowed to deploy this stack from CI."
  type        = string
  default     = "acme/ledger-service"
}

variable "finance_account_id" {
  description = "AWS account ID of the finance team's reporting tool, which reads the monthly exports."
  type        = string
}

variable "alarm_topic_arn" {
  description = "SNS topic that receives database alarms."
  type        = string
}

locals {
  name_prefix = "${var.service_name}-${var.environment}"

  common_tags = {
    Service     = var.service_name
    Environment = var.environment
    ManagedBy   = "terraform"
    CostCenter  = "finance-platform"
  }
}
