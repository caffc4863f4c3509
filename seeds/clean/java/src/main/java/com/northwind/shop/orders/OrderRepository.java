package com.northwind.shop.orders;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
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
    private final NamedParameterJdbcTemplate named;

    public OrderRepository(JdbcTemplate jdbc, NamedParameterJdbcTemplate named) {
        this.jdbc = jdbc;
        this.named = named;
    }

    private static Order mapOrder(ResultSet rs, int rowNum) throws SQLException {
        Order order = new Order();
        order.setId(rs.getLong("id"));
        order.setCustomerId(rs.getLong("customer_id"));
        order.setStatus(OrderStatus.valueOf(rs.getString("status").toUpperCase(Locale.ROOT)));
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
        sql.append("lower(c.email) LIKE ? ESCAPE '\\'");
        params.add("%" + escapeLike(emailFragment.toLowerCase(Locale.ROOT)) + "%");
        if (status != null) {
            sql.append(" AND o.status = ?");
            params.add(status.name().toLowerCase(Locale.ROOT));
        }
        sql.append(" ORDER BY o.created_at DESC LIMIT ?");
        params.add(limit);
        return jdbc.query(sql.toString(), ORDER_ROW, params.toArray());
    }

    private static String escapeLike(String value) {
        return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }

    public List<OrderLine> findLines(long orderId) {
        return jdbc.query(
                "SELECT product_id, quantity, unit_price FROM order_lines WHERE order_id = ? ORDER BY id",
                (rs, rowNum) -> new OrderLine(rs.getLong("product_id"), rs.getInt("quantity"), rs.getBigDecimal("unit_price")),
                orderId);
    }

    public Map<Long, Product> findProducts(Collection<Long> productIds) {
        Map<Long, Product> byId = new HashMap<>();
        if (productIds.isEmpty()) {
            return byId;
        }
        named.query("SELECT id, name, price, stock FROM products WHERE id IN (:ids)",
                        Map.of("ids", productIds), PRODUCT_ROW)
                .forEach(product -> byId.put(product.id(), product));
        return byId;
    }

    /** Atomically takes quantity units from stock; false when not enough are left. */
    public boolean reserveStock(long productId, int quantity) {
        return jdbc.update("UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?",
                quantity, productId, quantity) == 1;
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

    /**
     * Writes a status transition and its payment fields, only while the row is still in
     * {@code expected}; false when a concurrent request moved the order first. The customer-editable
     * columns are not written, so a stale copy can never undo an edit (or vice versa).
     */
    public boolean updateStatus(Order order, OrderStatus expected) {
        return jdbc.update(
                "UPDATE orders SET status = ?, payment_transaction_id = ?, refund_reason = ?, paid_at = ?"
                        + " WHERE id = ? AND status = ?",
                order.getStatus().name().toLowerCase(Locale.ROOT), order.getPaymentTransactionId(),
                order.getRefundReason(), order.getPaidAt() == null ? null : Timestamp.from(order.getPaidAt()),
                order.getId(), expected.name().toLowerCase(Locale.ROOT)) == 1;
    }

    /**
     * Sets the customer-editable fields (null keeps the stored value), only while the row is still in
     * {@code expected}; false when the order changed state in the meantime.
     */
    public boolean updateDetails(long orderId, OrderStatus expected, String shippingAddress, String deliveryNotes) {
        return jdbc.update(
                "UPDATE orders SET shipping_address = COALESCE(?, shipping_address),"
                        + " delivery_notes = COALESCE(?, delivery_notes) WHERE id = ? AND status = ?",
                shippingAddress, deliveryNotes, orderId, expected.name().toLowerCase(Locale.ROOT)) == 1;
    }
}
