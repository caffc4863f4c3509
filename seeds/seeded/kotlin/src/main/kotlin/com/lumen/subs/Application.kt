package com.lumen.subs

import com.zaxxer.hikari.HikariConfig
import com.zaxxer.hikari.HikariDataSource
import io.ktor.client.HttpClient
import io.ktor.client.engine.cio.CIO
import io.ktor.client.plugins.HttpTimeout
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpMethod
import io.ktor.http.HttpStatusCode
import io.ktor.serialization.kotlinx.json.json
import io.ktor.server.application.Application
import io.ktor.server.application.install
import io.ktor.server.application.log
import io.ktor.server.auth.Authentication
import io.ktor.server.auth.Principal
import io.ktor.server.auth.session
import io.ktor.server.engine.embeddedServer
import io.ktor.server.netty.Netty
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.plugins.callloging.CallLogging
import io.ktor.server.plugins.contentnegotiation.ContentNegotiation
import io.ktor.server.plugins.cors.routing.CORS
import io.ktor.server.plugins.statuspages.StatusPages
import io.ktor.server.request.httpMethod
import io.ktor.server.request.path
import io.ktor.server.request.uri
import io.ktor.server.response.respond
import io.ktor.server.routing.routing
import io.ktor.server.sessions.SessionTransportTransformerMessageAuthentication
import io.ktor.server.sessions.Sessions
import io.ktor.server.sessions.cookie
import io.ktor.util.hex
import kotlinx.serialization.Serializable
import kotlinx.serialization.json.Json
import org.slf4j.event.Level
import java.time.Instant
import io.ktor.client.plugins.contentnegotiation.ContentNegotiation as ClientContentNegotiation

/** Signed into the portal_session cookie. The signature never expires, so [expiresAt] (epoch seconds) is checked on every request. */
@Serializable
data class PortalSession(val customerId: Long, val expiresAt: Long) : Principal

@Serializable
data class ErrorBody(val error: String)

class NotFoundException(message: String) : RuntimeException(message)

class ConflictException(message: String) : RuntimeException(message)

fun main() {
    val port = System.getenv("PORT")?.toIntOrNull() ?: 8080
    embeddedServer(Netty, port = port, module = Application::module).start(wait = true)
}

fun Application.module() {
    val config = environment.config
    val dataSource = HikariDataSource(
        HikariConfig().apply {
            jdbcUrl = config.property("db.url").getString()
            username = config.property("db.user").getString()
            password = config.property("db.password").getString()
            maximumPoolSize = 10
        },
    )
    val repository = SubscriptionRepository(dataSource)
    val httpClient = HttpClient(CIO) {
        install(HttpTimeout) {
            connectTimeoutMillis = 2_000
            requestTimeoutMillis = 5_000
        }
        install(ClientContentNegotiation) { json(Json { ignoreUnknownKeys = true }) }
    }
    val plans = HttpPlanCatalog(httpClient, config.property("catalog.baseUrl").getString())
    val processor = BillingEventProcessor(repository)

    install(ContentNegotiation) { json(Json { ignoreUnknownKeys = true }) }

    install(CallLogging) {
        level = Level.INFO
        // SEED 4 [CRITICAL] (core/secrets-in-logs) every request line logs the raw Cookie header, i.e. the signed portal_session cookie, so anyone with log access can replay customers' sessions for up to 8 hours
        format { call -> "${call.request.httpMethod.value} ${call.request.uri} cookie=${call.request.headers[HttpHeaders.Cookie]}" }
    }

    install(CORS) {
        // SEED 2 [CRITICAL] (core/cors-misconfiguration) anyHost() together with allowCredentials makes Ktor echo any Origin with credentials allowed, so any website can drive the portal API with the customer's session cookie and read the answers
        anyHost()
        allowCredentials = true
        allowMethod(HttpMethod.Post)
        allowHeader(HttpHeaders.ContentType)
    }

    install(Sessions) {
        cookie<PortalSession>("portal_session") {
            cookie.path = "/"
            cookie.httpOnly = true
            cookie.secure = true
            cookie.maxAgeInSeconds = 60L * 60 * 8
            // SEED 1 [BLOCKER] (core/hardcoded-secrets) the cookie signing key is a literal in the source, so anyone with the repository can sign a portal_session cookie for any customerId
            transform(SessionTransportTransformerMessageAuthentication(hex("3f6c9e2a7b1d48e5a0c4f7b29e6d1a83c5b7e9f1")))
        }
    }

    install(Authentication) {
        session<PortalSession>("portal") {
            validate { session -> session.takeIf { Instant.now().epochSecond < it.expiresAt } }
            challenge { call.respond(HttpStatusCode.Unauthorized, ErrorBody("sign in required")) }
        }
    }

    install(StatusPages) {
        exception<BadRequestException> { call, cause ->
            call.respond(HttpStatusCode.BadRequest, ErrorBody(cause.message ?: "bad request"))
        }
        exception<NotFoundException> { call, cause ->
            call.respond(HttpStatusCode.NotFound, ErrorBody(cause.message ?: "not found"))
        }
        exception<ConflictException> { call, cause ->
            call.respond(HttpStatusCode.Conflict, ErrorBody(cause.message ?: "conflict"))
        }
        exception<Throwable> { call, cause ->
            call.application.log.error("unhandled error on ${call.request.path()}", cause)
            // SEED 3 [MAJOR] (core/sensitive-data-exposure) the full stack trace of any unexpected error is returned to the client, revealing class names, SQL and library versions to attackers
            call.respond(HttpStatusCode.InternalServerError, ErrorBody(cause.stackTraceToString()))
        }
    }

    routing {
        subscriptionRoutes(repository, plans)
        billingWebhook(processor)
    }
}
