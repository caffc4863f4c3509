'use server';

import { createHash } from 'node:crypto';
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

  const next = formData.get('next');
  // SEED 4 [MAJOR] (core/open-redirect) the client-supplied "next" field is used as the redirect target unchecked, so next=https://evil.example or //evil.example sends users off-site after creating a project
  redirect(typeof next === 'string' && next !== '' ? next : `/projects/${project.id}`);
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

  // SEED 5 [CRITICAL] (core/race-condition) seat usage is counted and the invitation created in separate statements; concurrent invites all pass the check and exceed the plan's seat limit
  const [project, members, pending] = await Promise.all([
    // BORDERLINE 1 the seat limit is read from Project.seatLimit while the billing webhook writes BillingAccount.seatLimit; how a project's limit follows its billing account (a sync job, a trigger or a per-project allowance) lives in schema and code outside this diff
    prisma.project.findUniqueOrThrow({ where: { id: projectId }, select: { name: true, seatLimit: true } }),
    prisma.membership.count({ where: { projectId } }),
    prisma.invitation.count({ where: { projectId, acceptedAt: null, expiresAt: { gt: new Date() } } }),
  ]);
  if (members + pending >= project.seatLimit) {
    return { error: 'All seats on this plan are in use.' };
  }
  // SEED 6 [CRITICAL] (core/insecure-randomness) invitation tokens grant project access but come from Math.random(), which is predictable; use crypto.randomBytes
  const token = Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  const invitation = await prisma.invitation.create({
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

  try {
    await sendInvitationEmail({ to: parsed.data.email, projectName: project.name, token });
  } catch (err) {
    // Nobody can use an invitation whose token was never delivered, so give the seat back.
    logger.error({ err, projectId }, 'invitation e-mail could not be sent');
    await prisma.invitation.deleteMany({ where: { id: invitation.id } });
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
  // SEED 7 [BLOCKER] (core/sql-injection) the search term is interpolated into a $queryRawUnsafe string, so a quote in the query breaks out of the ILIKE literal; use the $queryRaw tagged template
  return prisma.$queryRawUnsafe<ProjectHit[]>(
    `SELECT p.id, p.name
       FROM "Project" p
       JOIN "Membership" m ON m."projectId" = p.id
      WHERE m."userId" = $1 AND p.name ILIKE '%${term}%'
      ORDER BY p.name
      LIMIT 20`,
    session.user.id,
  );
}
