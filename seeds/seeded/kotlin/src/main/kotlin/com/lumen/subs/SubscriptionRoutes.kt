package com.lumen.subs

import io.ktor.http.HttpStatusCode
import io.ktor.server.application.call
import io.ktor.server.auth.authenticate
import io.ktor.server.auth.principal
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.request.receive
import io.ktor.server.request.contentLength
import io.ktor.server.request.receiveChannel
import io.ktor.server.response.respond
import io.ktor.server.response.respondRedirect
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import io.ktor.server.routing.route
import io.ktor.utils.io.core.readBytes
import io.ktor.utils.io.readRemaining
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.Serializable

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

private fun io.ktor.server.application.ApplicationCall.customerId(): Long =
    principal<PortalSession>()?.customerId ?: throw IllegalStateException("route is not authenticated")

private fun io.ktor.server.application.ApplicationCall.subscriptionId(): Long =
    parameters["id"]?.toLongOrNull() ?: throw BadRequestException("invalid subscription id")

fun Route.subscriptionRoutes(repository: SubscriptionRepository, plans: PlanCatalog) {
    authenticate("portal") {
        route("/api/subscriptions") {
            get {
                val status = call.request.queryParameters["status"]
                call.respond(repository.listForCustomer(call.customerId(), status).map { it.toView() })
            }

            get("/{id}") {
                val id = call.subscriptionId()
                // SEED 7 [MAJOR] (core/null-dereference) find returns null for an unknown id and !! turns that into a NullPointerException, so a missing subscription answers 500 (with the stack trace) instead of 404
                val subscription = repository.find(id)!!
                if (subscription.customerId != call.customerId()) {
                    throw NotFoundException("subscription $id not found")
                }
                call.respond(subscription.toView())
            }

            post {
                val request = call.receive<CreateSubscriptionRequest>()
                if (!PLAN_CODE.matches(request.planCode)) {
                    throw BadRequestException("invalid plan code")
                }
                // SEED 6 [MAJOR] (core/blocking-in-async) runBlocking inside a suspending route handler parks the Ktor worker thread for the whole catalog call; under load every worker blocks and the server stops answering
                val plan = runBlocking { plans.fetch(request.planCode) }
                    ?: throw BadRequestException("unknown plan ${request.planCode}")
                val created = repository.create(call.customerId(), plan.code, nextPeriodEnd())
                call.respond(HttpStatusCode.Created, created.toView())
            }

            post("/{id}/cancel") {
                val id = call.subscriptionId()
                // SEED 5 [BLOCKER] (core/idor) the subscription is cancelled without checking that it belongs to the signed-in customer, so anyone can cancel any customer's subscription by id
                val subscription = repository.find(id) ?: throw NotFoundException("subscription $id not found")
                if (subscription.status == SubscriptionStatus.CANCELED) {
                    throw ConflictException("subscription $id is already canceled")
                }
                repository.cancelAtPeriodEnd(subscription.id)
                call.respond(HttpStatusCode.Accepted, subscription.copy(cancelAtPeriodEnd = true).toView())
            }
        }

        get("/portal/return") {
            val next = call.request.queryParameters["next"] ?: "/account"
            // SEED 8 [MAJOR] (core/open-redirect) the next parameter is used as the redirect target unchecked, so a link to /portal/return?next=https://evil.example sends signed-in customers to a phishing page
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

fun Route.billingWebhook(processor: BillingEventProcessor) {
    post("/webhooks/billing") {
        val payload = call.receiveBounded(MAX_WEBHOOK_BYTES)?.toString(Charsets.UTF_8)
        if (payload == null) {
            call.respond(HttpStatusCode.PayloadTooLarge, ErrorBody("payload too large"))
            return@post
        }
        // SEED 9 [BLOCKER] (core/missing-authentication) the provider's signature header is never verified, so anyone who can reach the endpoint can post a forged payment.succeeded event and extend a subscription for free
        val event = BillingEvent.parse(payload)
        if (event == null) {
            call.respond(HttpStatusCode.NoContent)
            return@post
        }
        processor.handle(event)
        call.respond(HttpStatusCode.NoContent)
    }
}
