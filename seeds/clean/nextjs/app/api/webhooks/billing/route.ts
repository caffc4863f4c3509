import { createHmac, timingSafeEqual } from 'node:crypto';
import { NextRequest, NextResponse } from 'next/server';
import { Prisma } from '@prisma/client';
import { prisma } from '@/lib/db';
import { logger } from '@/lib/logger';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const TOLERANCE_SECONDS = 300;
const FREE_PLAN = { plan: 'free', seatLimit: 3 } as const;

function webhookSecret(): string {
  const secret = process.env.BILLING_WEBHOOK_SECRET;
  if (!secret) {
    throw new Error('BILLING_WEBHOOK_SECRET is not set');
  }
  return secret;
}

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
  const expected = createHmac('sha256', webhookSecret()).update(`${timestamp}.${payload}`).digest();
  const provided = Buffer.from(signature, 'hex');
  return provided.length === expected.length && timingSafeEqual(provided, expected);
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
  // The provider does not deliver events in order, and a failed delivery is retried later, so
  // subscription state and payment state each only move forward: an event older than the one
  // that last changed that state is recorded but not applied.
  const occurredAt = new Date(event.created * 1000);
  const subscriptionNotNewer: Prisma.BillingAccountWhereInput = {
    id: account.id,
    OR: [{ subscriptionEventAt: null }, { subscriptionEventAt: { lte: occurredAt } }],
  };
  const paymentNotNewer: Prisma.BillingAccountWhereInput = {
    id: account.id,
    OR: [{ paymentEventAt: null }, { paymentEventAt: { lte: occurredAt } }],
  };
  let applied: { count: number };
  switch (event.type) {
    case EventType.SubscriptionDeleted:
      applied = await tx.billingAccount.updateMany({
        where: subscriptionNotNewer,
        data: { ...FREE_PLAN, subscriptionEventAt: occurredAt },
      });
      break;
    case EventType.InvoicePaid: {
      const invoiceId = event.data.invoiceId;
      const invoice = invoiceId
        ? await tx.invoice.updateMany({
            where: { externalId: invoiceId },
            data: { status: 'paid', amountPaidCents: event.data.amountPaidCents, paidAt: occurredAt },
          })
        : { count: 0 };
      if (invoice.count === 0) {
        logger.warn({ eventId: event.id, invoiceId }, 'invoice.paid for an invoice that is not stored here');
      }
      // A successful payment ends the delinquency that a failed one started.
      applied = await tx.billingAccount.updateMany({
        where: paymentNotNewer,
        data: { delinquent: false, paymentEventAt: occurredAt },
      });
      break;
    }
    case EventType.InvoicePaymentFailed:
      applied = await tx.billingAccount.updateMany({
        where: paymentNotNewer,
        data: { delinquent: true, paymentEventAt: occurredAt },
      });
      break;
    case EventType.SubscriptionUpdated:
      // Plan and seats only: a plan change says nothing about whether the account has paid.
      applied = await tx.billingAccount.updateMany({
        where: subscriptionNotNewer,
        data: { plan: event.data.plan, seatLimit: event.data.seats, subscriptionEventAt: occurredAt },
      });
      break;
    default:
      logger.info({ eventId: event.id, type: event.type }, 'ignoring billing event');
      return;
  }
  if (applied.count === 0) {
    logger.info({ eventId: event.id, type: event.type }, 'billing event is older than the state it would change, not applied');
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
    if (err instanceof UnknownCustomerError) {
      // Not processed: a non-2xx answer makes the provider redeliver it on its own backoff schedule.
      logger.warn({ eventId: event.id, customerId: err.customerId }, 'billing event for unknown customer, redelivery requested');
      return NextResponse.json({ error: 'unknown customer' }, { status: 503 });
    }
    logger.error({ err, eventId: event.id }, 'billing webhook processing failed');
    return NextResponse.json({ error: 'processing failed' }, { status: 500 });
  }
  return NextResponse.json({ received: true });
}
