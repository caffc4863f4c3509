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
    select: {
      ...PROJECT_FIELDS,
      owner: { select: { id: true, name: true, avatarUrl: true } },
      _count: { select: { memberships: true } },
    },
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
  const parsed = UpdateProjectSchema.safeParse(await request.json().catch(() => null));
  if (!parsed.success) {
    return NextResponse.json({ error: 'invalid request', issues: parsed.error.flatten().fieldErrors }, { status: 400 });
  }
  // Editors change the content. Visibility decides who beyond the members can see the project and
  // archiving takes it out of use, so, like inviting members, those are admin decisions.
  const changesAccess = parsed.data.visibility !== undefined || parsed.data.status !== undefined;
  if (changesAccess && !hasRole(access.membership, 'admin')) {
    return forbidden();
  }
  const project = await prisma.project.update({
    where: { id: projectId },
    data: parsed.data,
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
  if (!hasRole(access.membership, 'owner')) {
    return forbidden();
  }
  // BORDERLINE 2 "Activity" rows keyed by projectId are not deleted here; whether they cascade with the project (or block its delete) is decided by the Prisma schema, which is not in this diff
  await prisma.$transaction([
    prisma.invitation.deleteMany({ where: { projectId } }),
    prisma.membership.deleteMany({ where: { projectId } }),
    prisma.project.delete({ where: { id: projectId } }),
  ]);
  return new NextResponse(null, { status: 204 });
}
