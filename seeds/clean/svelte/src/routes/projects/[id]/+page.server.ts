import { error, fail, redirect } from "@sveltejs/kit";
import { pool } from "$lib/server/db";
import type { Actions, PageServerLoad } from "./$types";

export type Role = "owner" | "admin" | "member" | "viewer";
export type TaskStatus = "todo" | "in_progress" | "blocked" | "done";

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  owner_id: string;
  archived_at: string | null;
}

export interface TaskRow {
  id: string;
  title: string;
  status: TaskStatus;
  assignee_name: string | null;
  /** YYYY-MM-DD, formatted in SQL so no time zone is applied. */
  due_on: string | null;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

/** Sort keys accepted from the query string, mapped to trusted column names. */
const SORT_COLUMNS: Record<string, string> = {
  due_on: "due_on",
  title: "title",
  status: "status",
  assignee: "assignee_name",
};
const ASSIGNABLE_ROLES: Role[] = ["admin", "member", "viewer"];

async function membership(projectId: string, userId: string): Promise<Role | null> {
  const { rows } = await pool.query<{ role: Role }>(
    "SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2",
    [projectId, userId],
  );
  return rows[0]?.role ?? null;
}

function clampOffset(raw: string | null): number {
  const parsed = Number.parseInt(raw ?? "", 10);
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : 0;
}

function clampLimit(raw: string | null): number {
  const parsed = Number.parseInt(raw ?? "", 10);
  if (!Number.isFinite(parsed) || parsed < 1) return DEFAULT_LIMIT;
  return Math.min(parsed, MAX_LIMIT);
}

/** Only same-site paths are accepted as a post-action destination. */
function safeRedirectPath(value: FormDataEntryValue | null, fallback: string): string {
  if (typeof value !== "string" || !value.startsWith("/")) return fallback;
  // Reject control characters (URL parsers strip tab/newline, turning "/\t/host" into "//host") and backslashes.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return fallback;
  const base = "http://same-origin.invalid";
  const resolved = new URL(value, base);
  if (resolved.origin !== base) return fallback;
  // Dot segments can resolve to a path that starts with "//" ("/.//host", "/..//host"),
  // which a browser reads as a protocol-relative URL to another host.
  if (resolved.pathname.startsWith("//")) return fallback;
  return resolved.pathname + resolved.search + resolved.hash;
}

function isAssignableRole(value: unknown): value is Role {
  return typeof value === "string" && (ASSIGNABLE_ROLES as string[]).includes(value);
}

export const load: PageServerLoad = async ({ params, url, locals }) => {
  if (!locals.user) {
    redirect(303, `/login?redirectTo=${encodeURIComponent(url.pathname)}`);
  }

  const role = await membership(params.id, locals.user.id);
  if (!role) {
    error(404, "Project not found");
  }
  const { rows: projects } = await pool.query<ProjectRow>(
    "SELECT id, name, description, owner_id, archived_at FROM projects WHERE id = $1",
    [params.id],
  );
  const project = projects[0];
  if (!project) {
    error(404, "Project not found");
  }

  const requestedSort = url.searchParams.get("sort") ?? "";
  const sort = Object.hasOwn(SORT_COLUMNS, requestedSort) ? requestedSort : "due_on";
  const direction = url.searchParams.get("dir") === "desc" ? "DESC" : "ASC";
  const limit = clampLimit(url.searchParams.get("limit"));
  const offset = clampOffset(url.searchParams.get("offset"));
  const { rows: tasks } = await pool.query<TaskRow>(
    `SELECT id, title, status, assignee_name, to_char(due_on, 'YYYY-MM-DD') AS due_on
       FROM tasks
      WHERE project_id = $1
      ORDER BY ${SORT_COLUMNS[sort]} ${direction} NULLS LAST, id
      LIMIT $2 OFFSET $3`,
    [params.id, limit, offset],
  );

  const { rows: counts } = await pool.query<{ total: number; done: number }>(
    "SELECT count(*)::int AS total, (count(*) FILTER (WHERE status = 'done'))::int AS done FROM tasks WHERE project_id = $1",
    [params.id],
  );
  const taskCounts = counts[0] ?? { total: 0, done: 0 };

  return { project, tasks, taskCounts, role, sort, direction, limit, offset };
};

export const actions: Actions = {
  addMember: async ({ params, request, locals }) => {
    if (!locals.user) error(401, "Sign in required");
    const role = await membership(params.id, locals.user.id);
    if (role !== "owner" && role !== "admin") error(403, "Only owners and admins can add members");

    const form = await request.formData();
    const email = String(form.get("email") ?? "").trim().toLowerCase();
    const memberRole = form.get("role");
    if (!email || !isAssignableRole(memberRole)) {
      return fail(400, { email, message: "Enter an email address and choose a role." });
    }

    const { rows: users } = await pool.query<{ id: string }>("SELECT id FROM users WHERE email = $1", [email]);
    if (!users[0]) {
      return fail(404, { email, message: "No user with that email address." });
    }

    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      // Adding never changes an existing member's role (that would let an admin demote the owner).
      const inserted = await client.query(
        `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, user_id) DO NOTHING`,
        [params.id, users[0].id, memberRole],
      );
      if (inserted.rowCount === 0) {
        await client.query("ROLLBACK");
        return fail(409, { email, message: "That user is already a member of this project." });
      }
      await client.query(
        "INSERT INTO project_activity (project_id, actor_id, kind, detail) VALUES ($1, $2, 'member_added', $3)",
        [params.id, locals.user.id, email],
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    } finally {
      client.release();
    }
    return { added: email };
  },

  archive: async ({ params, request, locals }) => {
    if (!locals.user) error(401, "Sign in required");
    const role = await membership(params.id, locals.user.id);
    const canArchive = role === "owner" || role === "admin";
    if (!canArchive) error(403, "Only owners and admins can archive");

    const form = await request.formData();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("UPDATE projects SET archived_at = now() WHERE id = $1 AND archived_at IS NULL", [params.id]);
      await client.query("DELETE FROM project_invites WHERE project_id = $1", [params.id]);
      await client.query(
        "INSERT INTO project_activity (project_id, actor_id, kind) VALUES ($1, $2, 'archived')",
        [params.id, locals.user.id],
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    } finally {
      client.release();
    }

    redirect(303, safeRedirectPath(form.get("redirectTo"), "/projects"));
  },

  delete: async ({ params, locals }) => {
    if (!locals.user) error(401, "Sign in required");
    const role = await membership(params.id, locals.user.id);
    if (role !== "owner") error(403, "Only the project owner can delete it");

    // BORDERLINE 1 hard delete relies on ON DELETE CASCADE for tasks and members; whether a soft delete is needed depends on the schema and retention policy
    await pool.query("DELETE FROM projects WHERE id = $1", [params.id]);
    redirect(303, "/projects");
  },
};
