import { NextRequest, NextResponse } from 'next/server';
import { Prisma } from '@prisma/client';
import { z } from 'zod';
import { auth } from '@/lib/auth';
import { prisma } from '@/lib/db';
import { getMembership, hasRole, type Membership } from '@/lib/permissions';

type RouteContext = { params: Promise<{ projectId: string }> };

const PROJECT_FIELDS = {
  id: true,
  name: true,
  description: true,
  status: true,
  visibility: true,
  seatLimit: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.ProjectSelect;

const UpdateProjectSchema = z
  .object({
    name: z.string().trim().min(1).max(120).optional(),
    description: z.string().max(20_000).optional(),
    visibility: z.enum(['private', 'internal']).optional(),
    status: z.enum(['active', 'paused', 'archived']).optional(),
  })
  .strict();

type Access = { ok: true; userId: string; membership: Membership } | { ok: false; response: NextResponse };

async function resolveAccess(projectId: string): Promise<Access> {
  const session = await auth();
  if (!session?.user?.id) {
    return { ok: false, response: NextResponse.json({ error: 'unauthorized' }, { status: 401 }) };
  }
  const membership = await getMembership(session.user.id, projectId);
  if (!membership) {
    // Same answer as a missing project, so ids cannot be probed.
    return { ok: false, response: NextResponse.json({ error: 'not found' }, { status: 404 }) };
  }
  return { ok: true, userId: session.user.id, membership };
}

function forbidden() {
  return NextResponse.json({ error: 'forbidden' }, { status: 403 });
}

export async function GET(_request: NextRequest, { params }: RouteContext) {
  const { projectId } = await params;
  const access = await resolveAccess(projectId);
  if (!access.ok) {
    return access.response;
  }
  const project = await prisma.project.findUnique({
    where: { id: projectId },
    // SEED 1 [BLOCKER] (core/sensitive-data-exposure) include: { owner: true } returns the owner's full user row (passwordHash, mfaSecret, email) to every project member; select only public owner fields
    include: { owner: true, _count: { select: { memberships: true } } },
  });
  if (!project) {
    return NextResponse.json({ error: 'not found' }, { status: 404 });
  }
  return NextResponse.json(project);
}

export async function PATCH(request: NextRequest, { params }: RouteContext) {
  const { projectId } = await params;
  const access = await resolveAccess(projectId);
  if (!access.ok) {
    return access.response;
  }
  if (!hasRole(access.membership, 'editor')) {
    return forbidden();
  }
  const body: unknown = await request.json().catch(() => null);
  if (body === null || typeof body !== 'object') {
    return NextResponse.json({ error: 'expected a JSON object' }, { status: 400 });
  }
  const project = await prisma.project.update({
    where: { id: projectId },
    // SEED 2 [BLOCKER] (core/mass-assignment) the unvalidated request body is written straight to the project (UpdateProjectSchema is never applied), so an editor can set ownerId, seatLimit or plan
    data: body as Prisma.ProjectUpdateInput,
    select: PROJECT_FIELDS,
  });
  return NextResponse.json(project);
}

export async function DELETE(_request: NextRequest, { params }: RouteContext) {
  const { projectId } = await params;
  const access = await resolveAccess(projectId);
  if (!access.ok) {
    return access.response;
  }
  // SEED 3 [BLOCKER] (core/missing-authorization) any member, including read-only viewers, can permanently delete the project; deletion must require the owner role
  await prisma.$transaction([
    prisma.invitation.deleteMany({ where: { projectId } }),
    prisma.membership.deleteMany({ where: { projectId } }),
    prisma.project.delete({ where: { id: projectId } }),
  ]);
  return new NextResponse(null, { status: 204 });
}
