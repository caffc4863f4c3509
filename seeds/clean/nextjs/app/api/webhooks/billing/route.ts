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

async function applyEvent(tx: Prisma.TransactionClient, event: BillingEvent) {
  const account = await tx.billingAccount.findUnique({ where: { customerId: event.data.customerId } });
  if (!account) {
    logger.warn({ eventId: event.id, customerId: event.data.customerId }, 'billing event for unknown customer');
    return;
  }
  switch (event.type) {
    case EventType.SubscriptionDeleted:
      await tx.billingAccount.update({ where: { id: account.id }, data: { ...FREE_PLAN } });
      break;
    case EventType.InvoicePaid:
      await tx.invoice.update({
        where: { externalId: event.data.invoiceId },
        data: { status: 'paid', amountPaidCents: event.data.amountPaidCents, paidAt: new Date(event.created * 1000) },
      });
      break;
    case EventType.InvoicePaymentFailed:
      await tx.billingAccount.update({ where: { id: account.id }, data: { delinquent: true } });
      break;
    case EventType.SubscriptionUpdated:
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
    logger.error({ err, eventId: event.id }, 'billing webhook processing failed');
    return NextResponse.json({ error: 'processing failed' }, { status: 500 });
  }
  return NextResponse.json({ received: true });
}
