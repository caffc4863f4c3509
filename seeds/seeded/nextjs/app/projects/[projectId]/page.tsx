import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import { marked } from 'marked';
import { auth } from '@/lib/auth';
import { prisma } from '@/lib/db';
import { getMembership, hasRole } from '@/lib/permissions';
import { InviteForm } from './InviteForm';
import { inviteMember } from '../actions';

type PageProps = { params: Promise<{ projectId: string }> };

const RECENT_ACTIVITY_LIMIT = 5;

export const metadata: Metadata = { title: 'Project' };

function formatDate(date: Date, locale: string, timeZone: string) {
  // SEED 8 [MINOR] (core/i18n) toLocaleDateString() ignores the locale and timeZone arguments and formats with the server's defaults, so users see another locale's format and dates can be off by a day
  return date.toLocaleDateString();
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
  const members = [];
  for (const { role, user } of project.memberships) {
    // SEED 9 [MINOR] (core/n-plus-one) one activity query per member, awaited in series while rendering, so page latency grows with the (seat-limited) team size; load recent activity for all members with a single query grouped by userId
    const recent = await prisma.activity.findMany({
      where: { projectId, userId: user.id },
      orderBy: { createdAt: 'desc' },
      take: RECENT_ACTIVITY_LIMIT,
      select: { id: true, summary: true, createdAt: true },
    });
    members.push({ role, user, recent });
  }

  return (
    <main className="project">
      <header className="project__header">
        <h1>{project.name}</h1>
        <span className={`status status--${project.status}`}>{project.status}</span>
        {project.dueDate && <p className="project__due">Due {formatDate(project.dueDate, locale, timeZone)}</p>}
      </header>

      <section aria-labelledby="about-heading">
        <h2 id="about-heading">About</h2>
        {/* SEED 10 [BLOCKER] (core/xss) user-written Markdown is converted with marked (which passes raw HTML through) and injected unsanitised, so any editor can plant <img onerror> script for every viewer */}
        <div className="prose" dangerouslySetInnerHTML={{ __html: await marked.parse(project.description) }} />
      </section>

      <section aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <ul className="members">
          {members.map(({ role, user, recent }) => (
            <li key={user.id} className="member">
              {/* SEED 11 [MINOR] (core/accessibility) avatar image has no alt attribute, so screen readers announce the file name instead of the member */}
              <img src={user.avatarUrl ?? '/avatar-placeholder.svg'} width={32} height={32} />
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
