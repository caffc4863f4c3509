package com.lumen.subs

import io.ktor.http.HttpStatusCode
import io.ktor.server.application.call
import io.ktor.server.auth.authenticate
import io.ktor.server.auth.principal
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.request.contentLength
import io.ktor.server.request.receive
import io.ktor.server.request.receiveChannel
import io.ktor.server.response.respond
import io.ktor.server.response.respondRedirect
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import io.ktor.server.routing.route
import io.ktor.util.hex
import io.ktor.utils.io.core.readBytes
import io.ktor.utils.io.readRemaining
import kotlinx.serialization.Serializable
import java.security.MessageDigest
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

@Serializable
data class CreateSubscriptionRequest(val planCode: String)

@Serializable
data class SubscriptionView(
    val id: Long,
    val planCode: String,
    val status: String,
    val currentPeriodEnd: String,
    val cancelAtPeriodEnd: Boolean,
)

private fun Subscription.toView() = SubscriptionView(
    id = id,
    planCode = planCode,
    status = status.name.lowercase(),
    currentPeriodEnd = currentPeriodEnd.toString(),
    cancelAtPeriodEnd = cancelAtPeriodEnd,
)

private val PLAN_CODE = Regex("^[a-z0-9-]{1,40}$")

private val LOCAL_PATH = Regex("^/[A-Za-z0-9/_.~%-]*(\\?[A-Za-z0-9=&_.~%-]*)?$")

/** Only same-site absolute paths are accepted as redirect targets. */
private fun isLocalPath(target: String): Boolean = LOCAL_PATH.matches(target) && !target.startsWith("//")

private fun validSignature(payload: ByteArray, signature: String, secret: ByteArray): Boolean {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(SecretKeySpec(secret, "HmacSHA256"))
    val expected = hex(mac.doFinal(payload)).toByteArray()
    return MessageDigest.isEqual(expected, signature.lowercase().toByteArray())
}

private fun io.ktor.server.application.ApplicationCall.customerId(): Long =
    principal<PortalSession>()?.customerId ?: throw IllegalStateException("route is not authenticated")

private fun io.ktor.server.application.ApplicationCall.subscriptionId(): Long =
    parameters["id"]?.toLongOrNull() ?: throw BadRequestException("invalid subscription id")

fun Route.subscriptionRoutes(repository: SubscriptionRepository, plans: PlanCatalog) {
    authenticate("portal") {
        route("/api/subscriptions") {
            get {
                val status = call.request.queryParameters["status"]?.let { value ->
                    SubscriptionStatus.entries.firstOrNull { it.name.equals(value, ignoreCase = true) }
                        ?: throw BadRequestException("unknown status $value")
                }
                call.respond(repository.listForCustomer(call.customerId(), status).map { it.toView() })
            }

            get("/{id}") {
                val id = call.subscriptionId()
                val subscription = repository.find(id)
                if (subscription == null || subscription.customerId != call.customerId()) {
                    throw NotFoundException("subscription $id not found")
                }
                call.respond(subscription.toView())
            }

            post {
                // BORDERLINE 2 the subscription starts active for a month and is not registered with the billing provider here; whether a charge or provider sync happens elsewhere (and whether one customer may hold the same plan twice) is outside the diff
                val request = call.receive<CreateSubscriptionRequest>()
                if (!PLAN_CODE.matches(request.planCode)) {
                    throw BadRequestException("invalid plan code")
                }
                val plan = plans.fetch(request.planCode)
                    ?: throw BadRequestException("unknown plan ${request.planCode}")
                val created = repository.create(call.customerId(), plan.code, nextPeriodEnd())
                call.respond(HttpStatusCode.Created, created.toView())
            }

            post("/{id}/cancel") {
                val id = call.subscriptionId()
                val subscription = repository.find(id)
                    ?.takeIf { it.customerId == call.customerId() }
                    ?: throw NotFoundException("subscription $id not found")
                if (subscription.status == SubscriptionStatus.CANCELED) {
                    throw ConflictException("subscription $id is already canceled")
                }
                // BORDERLINE 3 only the local cancel_at_period_end flag is set; telling the billing provider to stop charging, and ending the subscription at period end, is assumed to happen in a sync or scheduled job not in the diff
                repository.cancelAtPeriodEnd(subscription.id)
                call.respond(HttpStatusCode.Accepted, subscription.copy(cancelAtPeriodEnd = true).toView())
            }
        }

        get("/portal/return") {
            val next = call.request.queryParameters["next"]?.takeIf(::isLocalPath) ?: "/account"
            call.respondRedirect(next)
        }
    }
}

/** Provider events are a few kilobytes; anything larger is refused before it is buffered. */
private const val MAX_WEBHOOK_BYTES = 64L * 1024

/** Reads the request body, or returns null when it is larger than [limit] bytes. */
private suspend fun io.ktor.server.application.ApplicationCall.receiveBounded(limit: Long): ByteArray? {
    val declared = request.contentLength()
    if (declared != null && declared > limit) {
        return null
    }
    val bytes = receiveChannel().readRemaining(limit + 1).readBytes()
    return bytes.takeIf { it.size <= limit }
}

fun Route.billingWebhook(processor: BillingEventProcessor, signingSecret: ByteArray) {
    post("/webhooks/billing") {
        val payload = call.receiveBounded(MAX_WEBHOOK_BYTES)
        if (payload == null) {
            call.respond(HttpStatusCode.PayloadTooLarge, ErrorBody("payload too large"))
            return@post
        }
        val signature = call.request.headers["Billing-Signature"]
        if (signature == null || !validSignature(payload, signature, signingSecret)) {
            call.respond(HttpStatusCode.Unauthorized, ErrorBody("invalid signature"))
            return@post
        }
        val event = BillingEvent.parse(payload.toString(Charsets.UTF_8))
        if (event == null) {
            call.respond(HttpStatusCode.NoContent)
            return@post
        }
        processor.handle(event)
        call.respond(HttpStatusCode.NoContent)
    }
}
