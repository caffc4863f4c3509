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
const ASSIGNABLE_ROLES: Role[] = ["admin", "member", "viewer"];

async function membership(projectId: string, userId: string): Promise<Role | null> {
  const { rows } = await pool.query<{ role: Role }>(
    "SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2",
    [projectId, userId],
  );
  return rows[0]?.role ?? null;
}

function isAssignableRole(value: unknown): value is Role {
  return typeof value === "string" && (ASSIGNABLE_ROLES as string[]).includes(value);
}

export const load: PageServerLoad = async ({ params, url, locals }) => {
  if (!locals.user) {
    redirect(303, `/login?redirectTo=${encodeURIComponent(url.pathname)}`);
  }

  const role = await membership(params.id, locals.user.id);
  // SEED 1 [BLOCKER] (core/idor) role is looked up but never checked, so any signed-in user can read any project, its description and all its tasks just by changing the id in the URL
  const { rows: projects } = await pool.query<ProjectRow>(
    "SELECT id, name, description, owner_id, archived_at FROM projects WHERE id = $1",
    [params.id],
  );
  const project = projects[0];
  if (!project) {
    error(404, "Project not found");
  }

  const sort = url.searchParams.get("sort") ?? "due_on";
  const direction = url.searchParams.get("dir") === "desc" ? "DESC" : "ASC";
  // SEED 2 [MAJOR] (core/unbounded-resource) limit is taken from the query string with no upper bound (or NaN check), so ?limit=10000000 makes the server load and render every task row
  const limit = Number(url.searchParams.get("limit") ?? DEFAULT_LIMIT);
  const requestedOffset = Number.parseInt(url.searchParams.get("offset") ?? "", 10);
  const offset = Number.isSafeInteger(requestedOffset) && requestedOffset > 0 ? requestedOffset : 0;
  const { rows: tasks } = await pool.query<TaskRow>(
    // SEED 3 [BLOCKER] (core/sql-injection) the sort query parameter is interpolated into ORDER BY, allowing arbitrary SQL (e.g. boolean/time-based extraction) from a crafted link
    `SELECT id, title, status, assignee_name, to_char(due_on, 'YYYY-MM-DD') AS due_on
       FROM tasks
      WHERE project_id = $1
      ORDER BY ${sort} ${direction} NULLS LAST, id
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
    await client.query("BEGIN");
    try {
      // SEED 18 [CRITICAL] (core/missing-authorization) {lines: 5} the upsert overwrites an existing member's role, so an admin can "add" the owner's email with role viewer and demote the owner (or any other admin), taking control of the project
      await client.query(
        `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
        [params.id, users[0].id, memberRole],
      );
      await client.query(
        "INSERT INTO project_activity (project_id, actor_id, kind, detail) VALUES ($1, $2, 'member_added', $3)",
        [params.id, locals.user.id, email],
      );
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    }
    // SEED 4 [MAJOR] (core/resource-leak) release() only runs on success; any failed insert rethrows before it, leaking the pooled connection until the pool is exhausted
    client.release();
    return { added: email };
  },

  archive: async ({ params, request, locals }) => {
    if (!locals.user) error(401, "Sign in required");
    const role = await membership(params.id, locals.user.id);
    // SEED 12 [CRITICAL] (core/logic-error) `|| "admin"` is always truthy, so the 403 never fires and any signed-in user, member or not, can archive the project and wipe its pending invites
    const canArchive = role === "owner" || "admin";
    if (!canArchive) error(403, "Only owners and admins can archive");

    const form = await request.formData();
    // SEED 6 [MAJOR] (core/missing-transaction) three related writes run as separate autocommit statements on the pool; a failure midway leaves an archived project with live invites or no audit entry
    await pool.query("UPDATE projects SET archived_at = now() WHERE id = $1 AND archived_at IS NULL", [params.id]);
    await pool.query("DELETE FROM project_invites WHERE project_id = $1", [params.id]);
    await pool.query(
      "INSERT INTO project_activity (project_id, actor_id, kind) VALUES ($1, $2, 'archived')",
      [params.id, locals.user.id],
    );

    // SEED 7 [MAJOR] (core/open-redirect) redirectTo is a user-supplied form field passed straight to redirect(), so a crafted link can send users to an external phishing page after archiving
    redirect(303, String(form.get("redirectTo") || "/projects"));
  },

  delete: async ({ params, locals }) => {
    if (!locals.user) error(401, "Sign in required");
    const role = await membership(params.id, locals.user.id);
    // SEED 5 [BLOCKER] (core/missing-authorization) only membership is checked, so any viewer or member can permanently delete the whole project and its tasks
    if (!role) error(403, "You are not a member of this project");

    await pool.query("DELETE FROM projects WHERE id = $1", [params.id]);
    redirect(303, "/projects");
  },
};
