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
        format { call -> "${call.request.httpMethod.value} ${call.request.path()} -> ${call.response.status()}" }
    }

    install(CORS) {
        allowHost(config.property("portal.host").getString(), schemes = listOf("https"))
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
            cookie.extensions["SameSite"] = "lax"
            transform(SessionTransportTransformerMessageAuthentication(hex(config.property("session.signKey").getString())))
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
            call.respond(HttpStatusCode.InternalServerError, ErrorBody("internal error"))
        }
    }

    routing {
        subscriptionRoutes(repository, plans)
        billingWebhook(processor, config.property("billing.webhookSecret").getString().toByteArray())
    }
}
