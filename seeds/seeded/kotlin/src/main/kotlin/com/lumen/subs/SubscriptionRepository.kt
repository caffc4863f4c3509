package com.lumen.subs

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.sql.Connection
import java.sql.ResultSet
import java.sql.Timestamp
import java.time.Instant
import javax.sql.DataSource

enum class SubscriptionStatus { ACTIVE, PAST_DUE, SUSPENDED, CANCELED }

data class Subscription(
    val id: Long,
    val customerId: Long,
    val planCode: String,
    val status: SubscriptionStatus,
    val currentPeriodEnd: Instant,
    val cancelAtPeriodEnd: Boolean,
)

private const val COLUMNS = "id, customer_id, plan_code, status, current_period_end, cancel_at_period_end"

private fun ResultSet.toSubscription() = Subscription(
    id = getLong("id"),
    customerId = getLong("customer_id"),
    planCode = getString("plan_code"),
    status = SubscriptionStatus.valueOf(getString("status").uppercase()),
    currentPeriodEnd = getTimestamp("current_period_end").toInstant(),
    cancelAtPeriodEnd = getBoolean("cancel_at_period_end"),
)

/** JDBC access to subscriptions. Every call runs on the IO dispatcher. */
class SubscriptionRepository(private val dataSource: DataSource) {

    /** Statements that must commit together; see [transaction]. */
    class Tx internal constructor(private val conn: Connection) {
        /** Records the event id; false when it was already recorded (a redelivery). */
        fun claimEvent(eventId: String): Boolean =
            conn.prepareStatement(
                "INSERT INTO processed_events (event_id, processed_at) VALUES (?, now()) ON CONFLICT DO NOTHING",
            ).use { st ->
                st.setString(1, eventId)
                st.executeUpdate() == 1
            }

        /**
         * Extends a paid subscription by one month from the end of its current period (from now when
         * it has already lapsed). The payment always extends the period, but it makes the subscription
         * active only when no newer event (status_event_at) has set its status since. Canceled
         * subscriptions stay canceled; false when nothing was renewed.
         */
        fun renew(subscriptionId: Long, eventAt: Instant): Boolean =
            conn.prepareStatement(
                "UPDATE subscriptions SET current_period_end = GREATEST(current_period_end, now()) + interval '1 month'," +
                    " status = CASE WHEN status_event_at IS NULL OR status_event_at <= ? THEN 'active' ELSE status END," +
                    " status_event_at = GREATEST(status_event_at, ?)" +
                    " WHERE id = ? AND status <> 'canceled'",
            ).use { st ->
                val at = Timestamp.from(eventAt)
                st.setTimestamp(1, at)
                st.setTimestamp(2, at)
                st.setLong(3, subscriptionId)
                st.executeUpdate() == 1
            }

        /**
         * Sets the status from a provider event unless a newer event already set it (providers do not
         * deliver in order). Canceled is final. False when the event was stale or the subscription is
         * canceled or unknown.
         */
        fun setStatus(subscriptionId: Long, status: SubscriptionStatus, eventAt: Instant): Boolean =
            conn.prepareStatement(
                "UPDATE subscriptions SET status = ?, status_event_at = ?" +
                    " WHERE id = ? AND status <> 'canceled' AND (status_event_at IS NULL OR status_event_at <= ?)",
            ).use { st ->
                val at = Timestamp.from(eventAt)
                st.setString(1, status.name.lowercase())
                st.setTimestamp(2, at)
                st.setLong(3, subscriptionId)
                st.setTimestamp(4, at)
                st.executeUpdate() == 1
            }

        /** The provider ended the subscription: final, whatever the order in which earlier events arrive. */
        fun cancel(subscriptionId: Long, eventAt: Instant) {
            conn.prepareStatement(
                "UPDATE subscriptions SET status = 'canceled', status_event_at = GREATEST(status_event_at, ?) WHERE id = ?",
            ).use { st ->
                st.setTimestamp(1, Timestamp.from(eventAt))
                st.setLong(2, subscriptionId)
                st.executeUpdate()
            }
        }
    }

    suspend fun <T> transaction(block: (Tx) -> T): T = withContext(Dispatchers.IO) {
        dataSource.connection.use { conn ->
            conn.autoCommit = false
            try {
                block(Tx(conn)).also { conn.commit() }
            } catch (e: Throwable) {
                conn.rollback()
                throw e
            }
        }
    }

    suspend fun find(id: Long): Subscription? = withContext(Dispatchers.IO) {
        // SEED 15 [MAJOR] (core/resource-leak) neither the pooled connection nor the statement is closed, so every lookup leaks a Hikari connection and the pool is exhausted after maximumPoolSize requests
        val statement = dataSource.connection.prepareStatement("SELECT $COLUMNS FROM subscriptions WHERE id = ?")
        statement.setLong(1, id)
        val rs = statement.executeQuery()
        if (rs.next()) rs.toSubscription() else null
    }

    suspend fun listForCustomer(customerId: Long, status: String?): List<Subscription> = withContext(Dispatchers.IO) {
        var sql = "SELECT $COLUMNS FROM subscriptions WHERE customer_id = ?"
        if (status != null) {
            // SEED 14 [BLOCKER] (core/sql-injection) the status query parameter is spliced into the SQL through a string template, so ?status=x' OR customer_id <> 0 -- returns every customer's subscriptions
            sql += " AND status = '$status'"
        }
        sql += " ORDER BY id"
        dataSource.connection.use { conn ->
            conn.prepareStatement(sql).use { st ->
                st.setLong(1, customerId)
                st.executeQuery().use { rs ->
                    val result = mutableListOf<Subscription>()
                    while (rs.next()) {
                        // SEED 16 [MINOR] (core/duplicated-logic) the row mapping is copied inline instead of reusing ResultSet.toSubscription(), so a new column or status change must be made in two places
                        result += Subscription(
                            id = rs.getLong("id"),
                            customerId = rs.getLong("customer_id"),
                            planCode = rs.getString("plan_code"),
                            status = SubscriptionStatus.valueOf(rs.getString("status").uppercase()),
                            currentPeriodEnd = rs.getTimestamp("current_period_end").toInstant(),
                            cancelAtPeriodEnd = rs.getBoolean("cancel_at_period_end"),
                        )
                    }
                    result
                }
            }
        }
    }

    suspend fun create(customerId: Long, planCode: String, periodEnd: Instant): Subscription = withContext(Dispatchers.IO) {
        dataSource.connection.use { conn ->
            conn.prepareStatement(
                "INSERT INTO subscriptions (customer_id, plan_code, status, current_period_end, cancel_at_period_end)" +
                    " VALUES (?, ?, 'active', ?, false) RETURNING $COLUMNS",
            ).use { st ->
                st.setLong(1, customerId)
                st.setString(2, planCode)
                st.setTimestamp(3, Timestamp.from(periodEnd))
                st.executeQuery().use { rs ->
                    rs.next()
                    rs.toSubscription()
                }
            }
        }
    }

    suspend fun cancelAtPeriodEnd(id: Long) = withContext(Dispatchers.IO) {
        dataSource.connection.use { conn ->
            conn.prepareStatement("UPDATE subscriptions SET cancel_at_period_end = true WHERE id = ?").use { st ->
                st.setLong(1, id)
                st.executeUpdate()
            }
        }
    }
}
