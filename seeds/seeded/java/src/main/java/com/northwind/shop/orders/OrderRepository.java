package com.northwind.shop.orders;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;

@Repository
public class OrderRepository {

    private static final String ORDER_COLUMNS =
            "o.id, o.customer_id, o.status, o.total, o.currency, o.shipping_address, o.delivery_notes,"
                    + " o.payment_transaction_id, o.refund_reason, o.paid_at, o.created_at";

    private static final RowMapper<Order> ORDER_ROW = OrderRepository::mapOrder;

    private static final RowMapper<Product> PRODUCT_ROW = (rs, rowNum) -> new Product(
            rs.getLong("id"), rs.getString("name"), rs.getBigDecimal("price"), rs.getInt("stock"));

    private final JdbcTemplate jdbc;

    public OrderRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    private static Order mapOrder(ResultSet rs, int rowNum) throws SQLException {
        Order order = new Order();
        order.setId(rs.getLong("id"));
        order.setCustomerId(rs.getLong("customer_id"));
        // SEED 15 [MINOR] (core/i18n) toUpperCase() uses the JVM default locale; under a Turkish locale "paid" becomes "PAİD" and valueOf throws for every row
        order.setStatus(OrderStatus.valueOf(rs.getString("status").toUpperCase()));
        order.setTotal(rs.getBigDecimal("total"));
        order.setCurrency(rs.getString("currency"));
        order.setShippingAddress(rs.getString("shipping_address"));
        order.setDeliveryNotes(rs.getString("delivery_notes"));
        order.setPaymentTransactionId(rs.getString("payment_transaction_id"));
        order.setRefundReason(rs.getString("refund_reason"));
        Timestamp paidAt = rs.getTimestamp("paid_at");
        order.setPaidAt(paidAt == null ? null : paidAt.toInstant());
        order.setCreatedAt(rs.getTimestamp("created_at").toInstant());
        return order;
    }

    public Optional<Order> findById(long id) {
        return jdbc.query("SELECT " + ORDER_COLUMNS + " FROM orders o WHERE o.id = ?", ORDER_ROW, id)
                .stream()
                .findFirst();
    }

    public List<Order> findByCustomer(long customerId, int page, int size) {
        return jdbc.query(
                "SELECT " + ORDER_COLUMNS + " FROM orders o WHERE o.customer_id = ?"
                        + " ORDER BY o.created_at DESC, o.id DESC LIMIT ? OFFSET ?",
                ORDER_ROW, customerId, size, (long) page * size);
    }

    /** Support tool: orders of customers whose e-mail contains the given fragment. */
    public List<Order> search(String emailFragment, OrderStatus status, int limit) {
        StringBuilder sql = new StringBuilder("SELECT " + ORDER_COLUMNS
                + " FROM orders o JOIN customers c ON c.id = o.customer_id WHERE ");
        List<Object> params = new ArrayList<>();
        // SEED 14 [BLOCKER] (core/sql-injection) the e-mail fragment is concatenated into the LIKE literal, so a value containing a quote rewrites the query and can read or modify any table
        sql.append("lower(c.email) LIKE '%").append(emailFragment.toLowerCase(Locale.ROOT)).append("%'");
        if (status != null) {
            sql.append(" AND o.status = ?");
            params.add(status.name().toLowerCase(Locale.ROOT));
        }
        sql.append(" ORDER BY o.created_at DESC LIMIT ?");
        params.add(limit);
        return jdbc.query(sql.toString(), ORDER_ROW, params.toArray());
    }

    public List<OrderLine> findLines(long orderId) {
        return jdbc.query(
                "SELECT product_id, quantity, unit_price FROM order_lines WHERE order_id = ? ORDER BY id",
                (rs, rowNum) -> new OrderLine(rs.getLong("product_id"), rs.getInt("quantity"), rs.getBigDecimal("unit_price")),
                orderId);
    }

    public Optional<Product> findProduct(long productId) {
        return jdbc.query("SELECT id, name, price, stock FROM products WHERE id = ?", PRODUCT_ROW, productId)
                .stream()
                .findFirst();
    }

    public void updateStock(long productId, int stock) {
        jdbc.update("UPDATE products SET stock = ? WHERE id = ?", stock, productId);
    }

    public void restock(long productId, int quantity) {
        jdbc.update("UPDATE products SET stock = stock + ? WHERE id = ?", quantity, productId);
    }

    public long insert(Order order) {
        KeyHolder keys = new GeneratedKeyHolder();
        jdbc.update(connection -> {
            PreparedStatement ps = connection.prepareStatement(
                    "INSERT INTO orders (customer_id, status, total, currency, shipping_address, created_at)"
                            + " VALUES (?, ?, ?, ?, ?, now())",
                    Statement.RETURN_GENERATED_KEYS);
            ps.setLong(1, order.getCustomerId());
            ps.setString(2, order.getStatus().name().toLowerCase(Locale.ROOT));
            ps.setBigDecimal(3, order.getTotal());
            ps.setString(4, order.getCurrency());
            ps.setString(5, order.getShippingAddress());
            return ps;
        }, keys);
        return ((Number) keys.getKeys().get("id")).longValue();
    }

    public void insertLines(long orderId, List<OrderLine> lines) {
        jdbc.batchUpdate(
                "INSERT INTO order_lines (order_id, product_id, quantity, unit_price) VALUES (?, ?, ?, ?)",
                lines, lines.size(), (ps, line) -> {
                    ps.setLong(1, orderId);
                    ps.setLong(2, line.productId());
                    ps.setInt(3, line.quantity());
                    ps.setBigDecimal(4, line.unitPrice());
                });
    }

    // SEED 17 [MAJOR] (core/race-condition) {lines: 8} update rewrites every column from the caller's in-memory copy with no version or status guard, so a PATCH that loaded the order before checkout captured the charge writes status back to pending (and a refund racing a PATCH is reverted to paid)
    public void update(Order order) {
        jdbc.update(
                "UPDATE orders SET status = ?, total = ?, shipping_address = ?, delivery_notes = ?,"
                        + " payment_transaction_id = ?, refund_reason = ?, paid_at = ? WHERE id = ?",
                order.getStatus().name().toLowerCase(Locale.ROOT), order.getTotal(), order.getShippingAddress(),
                order.getDeliveryNotes(), order.getPaymentTransactionId(), order.getRefundReason(),
                order.getPaidAt() == null ? null : Timestamp.from(order.getPaidAt()), order.getId());
    }
}
