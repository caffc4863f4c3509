import { createHmac } from 'node:crypto';
import { NextRequest, NextResponse } from 'next/server';
import { Prisma } from '@prisma/client';
import { prisma } from '@/lib/db';
import { logger } from '@/lib/logger';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

// SEED 12 [BLOCKER] (core/hardcoded-secrets) webhook signing secret falls back to a literal in source, so anyone with repo access can forge billing events (e.g. mark invoices paid)
const WEBHOOK_SECRET = process.env.BILLING_WEBHOOK_SECRET ?? 'whsec-prod-9d3f7a1c52e84b06';
const TOLERANCE_SECONDS = 300;

const EventType = {
  InvoicePaid: 'invoice.paid',
  InvoicePaymentFailed: 'invoice.payment_failed',
  SubscriptionUpdated: 'subscription.updated',
  SubscriptionDeleted: 'subscription.deleted',
} as const;

type BillingEvent = {
  id: string;
  type: (typeof EventType)[keyof typeof EventType];
  created: number;
  data: {
    customerId: string;
    invoiceId?: string;
    amountPaidCents?: number;
    plan?: string;
    seats?: number;
  };
};

function verifySignature(payload: string, header: string | null): boolean {
  if (!header) {
    return false;
  }
  const fields = new Map(
    header.split(',').map((part) => {
      const index = part.indexOf('=');
      return [part.slice(0, index).trim(), part.slice(index + 1).trim()] as const;
    }),
  );
  const timestamp = Number(fields.get('t'));
  const signature = fields.get('v1');
  if (!Number.isInteger(timestamp) || !signature) {
    return false;
  }
  if (Math.abs(Date.now() / 1000 - timestamp) > TOLERANCE_SECONDS) {
    return false;
  }
  const expected = createHmac('sha256', WEBHOOK_SECRET).update(`${timestamp}.${payload}`).digest('hex');
  // SEED 13 [MINOR] (core/timing-attack) HMAC compared with ===, which returns early on the first differing character (a timing side channel that is hard to exploit over the network); use timingSafeEqual
  return signature === expected;
}

/** No billing account for the event's customer (yet): the event must not be recorded as processed. */
class UnknownCustomerError extends Error {
  constructor(readonly customerId: string) {
    super(`no billing account for customer ${customerId}`);
    this.name = 'UnknownCustomerError';
  }
}

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.values(EventType));

async function applyEvent(tx: Prisma.TransactionClient, event: BillingEvent) {
  if (!KNOWN_EVENT_TYPES.has(event.type)) {
    logger.info({ eventId: event.id, type: event.type }, 'ignoring billing event');
    return;
  }
  const account = await tx.billingAccount.findUnique({ where: { customerId: event.data.customerId } });
  if (!account) {
    // The provider can send a customer's first events before the account row is committed.
    // Throwing rolls back the webhookEvent row too, so a redelivery is applied instead of skipped.
    throw new UnknownCustomerError(event.data.customerId);
  }
  // SEED 14 [MAJOR] (core/missing-case) {symbol: SubscriptionDeleted} EventType.SubscriptionDeleted is never handled, so cancelled subscriptions keep their paid plan and seats indefinitely
  switch (event.type) {
    case EventType.InvoicePaid: {
      const invoiceId = event.data.invoiceId;
      const invoice = invoiceId
        ? await tx.invoice.updateMany({
            where: { externalId: invoiceId },
            data: { status: 'paid', amountPaidCents: event.data.amountPaidCents, paidAt: new Date(event.created * 1000) },
          })
        : { count: 0 };
      if (invoice.count === 0) {
        logger.warn({ eventId: event.id, invoiceId }, 'invoice.paid for an invoice that is not stored here');
      }
      await tx.billingAccount.update({ where: { id: account.id }, data: { delinquent: false } });
      break;
    }
    case EventType.InvoicePaymentFailed:
      await tx.billingAccount.update({ where: { id: account.id }, data: { delinquent: true } });
      break;
    case EventType.SubscriptionUpdated:
      // SEED 16 [MAJOR] (core/logic-error) {lines: 4} events are applied in arrival order and event.created is never compared, so a subscription.updated the provider delivers late overwrites a newer plan and seat change, and it clears delinquent although nothing was paid
      await tx.billingAccount.update({
        where: { id: account.id },
        data: { plan: event.data.plan, seatLimit: event.data.seats, delinquent: false },
      });
      break;
    default:
      logger.info({ eventId: event.id, type: event.type }, 'ignoring billing event');
  }
}

export async function POST(request: NextRequest) {
  const payload = await request.text();
  if (!verifySignature(payload, request.headers.get('billing-signature'))) {
    return NextResponse.json({ error: 'invalid signature' }, { status: 400 });
  }
  const event = JSON.parse(payload) as BillingEvent;

  try {
    await prisma.$transaction(async (tx) => {
      // The primary key on webhookEvent.id makes redeliveries fail here (P2002).
      await tx.webhookEvent.create({ data: { id: event.id, type: event.type } });
      await applyEvent(tx, event);
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      return NextResponse.json({ received: true, duplicate: true });
    }
    // SEED 15 [MAJOR] (core/swallowed-error) processing failures are logged and then acknowledged with 200, so the provider never retries and the payment or plan change is silently lost
    logger.error({ err, eventId: event.id }, 'billing webhook processing failed');
  }
  return NextResponse.json({ received: true });
}
