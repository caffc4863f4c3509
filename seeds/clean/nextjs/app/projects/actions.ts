'use server';

import { createHash, randomBytes } from 'node:crypto';
import { redirect } from 'next/navigation';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { auth } from '@/lib/auth';
import { prisma } from '@/lib/db';
import { logger } from '@/lib/logger';
import { sendInvitationEmail } from '@/lib/mail';
import { getMembership, hasRole } from '@/lib/permissions';

export type ActionState = {
  error?: string;
  fieldErrors?: Record<string, string[] | undefined>;
  message?: string;
};

export type ProjectHit = { id: string; name: string };

const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const CreateProjectSchema = z.object({
  name: z.string().trim().min(1, 'Name is required').max(120),
  description: z.string().max(20_000).default(''),
});

const InviteSchema = z.object({
  email: z.string().trim().toLowerCase().email('Enter a valid e-mail address'),
  role: z.enum(['viewer', 'editor', 'admin']),
});

/** Only same-origin absolute paths are accepted as post-action destinations. */
function safeRedirectPath(value: FormDataEntryValue | null, fallback: string): string {
  if (typeof value !== 'string' || !value.startsWith('/')) {
    return fallback;
  }
  // Parse the way a browser would (tabs stripped, backslashes as slashes) and keep it only if it stays on this origin.
  const base = 'http://app.invalid';
  let target: URL;
  try {
    target = new URL(value, base);
  } catch {
    return fallback;
  }
  if (target.origin !== base) {
    return fallback;
  }
  // Dot segments can leave an empty first segment ('/.//evil.example' parses to the path '//evil.example'),
  // which a browser reads as a protocol-relative URL to another host, so the result is checked as well.
  const path = `${target.pathname}${target.search}${target.hash}`;
  return path.startsWith('//') || path.startsWith('/\\') ? fallback : path;
}

async function currentUserId(): Promise<string> {
  const session = await auth();
  if (!session?.user?.id) {
    redirect('/login');
  }
  return session.user.id;
}

export async function createProject(_prev: ActionState, formData: FormData): Promise<ActionState> {
  const userId = await currentUserId();
  const parsed = CreateProjectSchema.safeParse({
    name: formData.get('name'),
    description: formData.get('description') ?? undefined,
  });
  if (!parsed.success) {
    return { fieldErrors: parsed.error.flatten().fieldErrors };
  }

  const project = await prisma.$transaction(async (tx) => {
    const created = await tx.project.create({ data: { ...parsed.data, ownerId: userId } });
    await tx.membership.create({ data: { projectId: created.id, userId, role: 'owner' } });
    return created;
  });
  revalidatePath('/projects');

  redirect(safeRedirectPath(formData.get('next'), `/projects/${project.id}`));
}

export async function inviteMember(projectId: string, _prev: ActionState, formData: FormData): Promise<ActionState> {
  const userId = await currentUserId();
  const membership = await getMembership(userId, projectId);
  if (!membership || !hasRole(membership, 'admin')) {
    return { error: 'You do not have permission to invite members to this project.' };
  }
  const parsed = InviteSchema.safeParse({ email: formData.get('email'), role: formData.get('role') });
  if (!parsed.success) {
    return { fieldErrors: parsed.error.flatten().fieldErrors };
  }

  const token = randomBytes(32).toString('base64url');
  const invited = await prisma.$transaction(async (tx) => {
    // Lock the project row so concurrent invitations are counted one at a time.
    // BORDERLINE 1 the seat limit is read from Project.seatLimit while the billing webhook writes BillingAccount.seatLimit; how a project's limit follows its billing account (a sync job, a trigger or a per-project allowance) lives in schema and code outside this diff
    const [locked] = await tx.$queryRaw<{ name: string; seatLimit: number }[]>`
      SELECT name, "seatLimit" FROM "Project" WHERE id = ${projectId} FOR UPDATE`;
    if (!locked) {
      throw new Error(`project ${projectId} not found`);
    }
    const members = await tx.membership.count({ where: { projectId } });
    // Re-inviting an address replaces its pending invitation instead of taking another seat.
    const pending = await tx.invitation.count({
      where: { projectId, acceptedAt: null, expiresAt: { gt: new Date() }, email: { not: parsed.data.email } },
    });
    if (members + pending >= locked.seatLimit) {
      return null;
    }
    await tx.invitation.deleteMany({ where: { projectId, email: parsed.data.email, acceptedAt: null } });
    const invitation = await tx.invitation.create({
      data: {
        projectId,
        email: parsed.data.email,
        role: parsed.data.role,
        tokenHash: createHash('sha256').update(token).digest('hex'),
        invitedById: userId,
        expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
      },
      select: { id: true },
    });
    return { projectName: locked.name, invitationId: invitation.id };
  });
  if (!invited) {
    return { error: 'All seats on this plan are in use.' };
  }

  try {
    await sendInvitationEmail({ to: parsed.data.email, projectName: invited.projectName, token });
  } catch (err) {
    // Nobody can use an invitation whose token was never delivered, so give the seat back.
    logger.error({ err, projectId }, 'invitation e-mail could not be sent');
    await prisma.invitation.deleteMany({ where: { id: invited.invitationId } });
    return { error: 'The invitation e-mail could not be sent. Please try again.' };
  }
  revalidatePath(`/projects/${projectId}`);
  return { message: `Invitation sent to ${parsed.data.email}.` };
}

export async function searchProjects(query: string): Promise<ProjectHit[]> {
  const session = await auth();
  if (!session?.user?.id || typeof query !== 'string') {
    return [];
  }
  const term = query.trim().slice(0, 100);
  if (term === '') {
    return [];
  }
  const pattern = `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  return prisma.$queryRaw<ProjectHit[]>`
    SELECT p.id, p.name
      FROM "Project" p
      JOIN "Membership" m ON m."projectId" = p.id
     WHERE m."userId" = ${session.user.id} AND p.name ILIKE ${pattern}
     ORDER BY p.name
     LIMIT 20`;
}
