package com.lumen.subs

import io.ktor.client.HttpClient
import io.ktor.client.call.body
import io.ktor.client.request.get
import io.ktor.http.HttpStatusCode
import io.ktor.http.encodeURLPathPart
import io.ktor.server.plugins.BadRequestException
import kotlinx.serialization.Serializable
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.long
import org.slf4j.LoggerFactory
import java.time.DateTimeException
import java.time.Duration
import java.time.Instant
import java.time.OffsetDateTime
import java.time.ZoneOffset
import java.util.concurrent.ConcurrentHashMap

@Serializable
data class Plan(val code: String, val name: String, val priceMinor: Long, val currency: String)

interface PlanCatalog {
    suspend fun fetch(code: String): Plan?
}

/** Reads plans from the catalog service and keeps them for a few minutes. */
class HttpPlanCatalog(private val client: HttpClient, private val baseUrl: String) : PlanCatalog {
    private data class CachedPlan(val plan: Plan, val expiresAt: Instant)

    private val cache = ConcurrentHashMap<String, CachedPlan>()

    override suspend fun fetch(code: String): Plan? {
        val now = Instant.now()
        cache[code]?.takeIf { it.expiresAt.isAfter(now) }?.let { return it.plan }
        val response = client.get("$baseUrl/plans/${code.encodeURLPathPart()}")
        if (response.status == HttpStatusCode.NotFound) {
            return null
        }
        val plan = response.body<Plan>()
        cache[code] = CachedPlan(plan, now.plus(CACHE_TTL))
        return plan
    }

    private companion object {
        val CACHE_TTL: Duration = Duration.ofMinutes(5)
    }
}

/** Failed payment attempts after which a subscription is suspended instead of past due. */
private const val MAX_PAYMENT_ATTEMPTS = 4

/** End of the first monthly billing period of a new subscription. */
fun nextPeriodEnd(): Instant =
    OffsetDateTime.now(ZoneOffset.UTC).plusMonths(1).toInstant()

sealed class BillingEvent {
    abstract val id: String
    abstract val subscriptionId: Long

    /** When the provider created the event. Deliveries can arrive out of order (a failed delivery is retried later). */
    abstract val occurredAt: Instant

    data class PaymentSucceeded(
        override val id: String,
        override val subscriptionId: Long,
        override val occurredAt: Instant,
        val amountMinor: Long,
        val currency: String,
    ) : BillingEvent()

    data class PaymentFailed(
        override val id: String,
        override val subscriptionId: Long,
        override val occurredAt: Instant,
        val attempt: Int,
        val reason: String,
    ) : BillingEvent()

    data class ChargebackOpened(
        override val id: String,
        override val subscriptionId: Long,
        override val occurredAt: Instant,
        val disputeId: String,
        val amountMinor: Long,
    ) : BillingEvent()

    data class SubscriptionCanceled(
        override val id: String,
        override val subscriptionId: Long,
        override val occurredAt: Instant,
    ) : BillingEvent()

    companion object {
        private val json = Json { ignoreUnknownKeys = true }

        private val CONSUMED_TYPES = setOf("payment.succeeded", "payment.failed", "chargeback.opened", "subscription.canceled")

        private fun JsonObject.text(key: String): String =
            (this[key] as? JsonPrimitive)?.takeUnless { it is JsonNull }?.content
                ?: throw BadRequestException("event field '$key' is missing or not a value")

        private fun JsonObject.number(key: String): Long = text(key).toLongOrNull()
            ?: throw BadRequestException("event field '$key' is not a number")

        private fun JsonObject.epochSeconds(key: String): Instant = try {
            Instant.ofEpochSecond(number(key))
        } catch (e: DateTimeException) {
            throw BadRequestException("event field '$key' is not a timestamp", e)
        }

        /** Parses a provider event; returns null for event types this service does not consume. */
        fun parse(payload: String): BillingEvent? {
            val root = try {
                json.parseToJsonElement(payload).jsonObject
            } catch (e: SerializationException) {
                throw BadRequestException("event is not a JSON object", e)
            } catch (e: IllegalArgumentException) {
                throw BadRequestException("event is not a JSON object", e)
            }
            val type = root.text("type")
            if (type !in CONSUMED_TYPES) {
                return null
            }
            val data = root["data"] as? JsonObject ?: throw BadRequestException("event has no data")
            val id = root.text("id")
            val occurredAt = root.epochSeconds("created")
            val subscriptionId = data.number("subscription_id")
            return when (type) {
                "payment.succeeded" -> PaymentSucceeded(id, subscriptionId, occurredAt, data.number("amount"), data.text("currency"))
                "payment.failed" -> PaymentFailed(id, subscriptionId, occurredAt, data.number("attempt").toInt(), data.text("reason"))
                "chargeback.opened" -> ChargebackOpened(id, subscriptionId, occurredAt, data.text("dispute_id"), data.number("amount"))
                "subscription.canceled" -> SubscriptionCanceled(id, subscriptionId, occurredAt)
                else -> null
            }
        }
    }
}

class BillingEventProcessor(private val repository: SubscriptionRepository) {
    private val log = LoggerFactory.getLogger(BillingEventProcessor::class.java)

    /** Applies an event exactly once: the event id is recorded in the same transaction as its effect. */
    suspend fun handle(event: BillingEvent) {
        repository.transaction { tx ->
            if (!tx.claimEvent(event.id)) {
                log.info("event {} already processed", event.id)
                return@transaction
            }
            apply(tx, event)
        }
    }

    private fun apply(tx: SubscriptionRepository.Tx, event: BillingEvent) {
        when (event) {
            is BillingEvent.ChargebackOpened -> {
                if (!tx.setStatus(event.subscriptionId, SubscriptionStatus.SUSPENDED, event.occurredAt)) {
                    log.info("chargeback event {} not applied: subscription {} is canceled, unknown or has a newer event", event.id, event.subscriptionId)
                }
                log.warn("chargeback {} opened on subscription {}", event.disputeId, event.subscriptionId)
            }
            // BORDERLINE 5 any payment.succeeded renews one month without checking amountMinor or currency against the plan price; right only if the provider (not in this diff, see BORDERLINE 2 and 3) sends this event solely for full renewal charges of the subscription
            is BillingEvent.PaymentSucceeded -> {
                if (!tx.renew(event.subscriptionId, event.occurredAt)) {
                    log.warn("payment {} received for canceled or unknown subscription {}", event.id, event.subscriptionId)
                }
            }
            is BillingEvent.PaymentFailed -> {
                val status = if (event.attempt >= MAX_PAYMENT_ATTEMPTS) SubscriptionStatus.SUSPENDED else SubscriptionStatus.PAST_DUE
                if (!tx.setStatus(event.subscriptionId, status, event.occurredAt)) {
                    log.info("payment failure {} not applied: subscription {} is canceled, unknown or has a newer event", event.id, event.subscriptionId)
                }
                log.warn("payment attempt {} failed for subscription {}: {}", event.attempt, event.subscriptionId, event.reason)
            }
            is BillingEvent.SubscriptionCanceled -> tx.cancel(event.subscriptionId, event.occurredAt)
        }
    }
}
