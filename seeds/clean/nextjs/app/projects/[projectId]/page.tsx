import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import DOMPurify from 'isomorphic-dompurify';
import { marked } from 'marked';
import { auth } from '@/lib/auth';
import { prisma } from '@/lib/db';
import { getMembership, hasRole } from '@/lib/permissions';
import { InviteForm } from './InviteForm';
import { inviteMember } from '../actions';

type PageProps = { params: Promise<{ projectId: string }> };
type ActivityRow = { id: string; userId: string; summary: string; createdAt: Date };

const RECENT_ACTIVITY_LIMIT = 5;

export const metadata: Metadata = { title: 'Project' };

function formatDate(date: Date, locale: string, timeZone: string) {
  return date.toLocaleDateString(locale, { timeZone, dateStyle: 'medium' });
}

export default async function ProjectPage({ params }: PageProps) {
  const { projectId } = await params;
  const session = await auth();
  if (!session?.user?.id) {
    redirect(`/login?next=${encodeURIComponent(`/projects/${projectId}`)}`);
  }
  const membership = await getMembership(session.user.id, projectId);
  if (!membership) {
    notFound();
  }

  const project = await prisma.project.findUnique({
    where: { id: projectId },
    select: {
      id: true,
      name: true,
      description: true,
      status: true,
      dueDate: true,
      memberships: {
        select: { role: true, user: { select: { id: true, name: true, avatarUrl: true } } },
        orderBy: { createdAt: 'asc' },
      },
    },
  });
  if (!project) {
    notFound();
  }

  const locale = session.user.locale ?? 'en-US';
  const timeZone = session.user.timeZone ?? 'UTC';
  const activity = await prisma.$queryRaw<ActivityRow[]>`
    SELECT id, "userId", summary, "createdAt"
      FROM (
        SELECT a.id, a."userId", a.summary, a."createdAt",
               ROW_NUMBER() OVER (PARTITION BY a."userId" ORDER BY a."createdAt" DESC) AS rank
          FROM "Activity" a
         WHERE a."projectId" = ${projectId}
      ) ranked
     WHERE rank <= ${RECENT_ACTIVITY_LIMIT}
     ORDER BY "createdAt" DESC`;
  const members = project.memberships.map(({ role, user }) => ({
    role,
    user,
    recent: activity.filter((item) => item.userId === user.id),
  }));

  return (
    <main className="project">
      <header className="project__header">
        <h1>{project.name}</h1>
        <span className={`status status--${project.status}`}>{project.status}</span>
        {project.dueDate && <p className="project__due">Due {formatDate(project.dueDate, locale, timeZone)}</p>}
      </header>

      <section aria-labelledby="about-heading">
        <h2 id="about-heading">About</h2>
        <div className="prose" dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(await marked.parse(project.description)) }} />
      </section>

      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <ul className="members">
          {members.map(({ role, user, recent }) => (
            <li key={user.id} className="member">
              <img src={user.avatarUrl ?? '/avatar-placeholder.svg'} alt="" width={32} height={32} />
              <span className="member__name">{user.name}</span>
              <span className="member__role">{role}</span>
              <ul className="member__activity">
                {recent.map((item) => (
                  <li key={item.id}>
                    <time dateTime={item.createdAt.toISOString()}>{formatDate(item.createdAt, locale, timeZone)}</time>{' '}
                    {item.summary}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      </section>

      {hasRole(membership, 'admin') && (
        <section aria-labelledby="invite-heading">
          <h2 id="invite-heading">Invite a member</h2>
          <InviteForm action={inviteMember.bind(null, project.id)} />
        </section>
      )}

      <nav>
        <Link href="/projects">All projects</Link>
      </nav>
    </main>
  );
}
