package com.northwind.shop.orders;

import java.math.BigDecimal;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Thin client for the card payment gateway. Every call carries an idempotency key so
 * that a retried request never charges or refunds twice.
 */
@Component
public class PaymentGatewayClient {

    private static final Logger log = LoggerFactory.getLogger(PaymentGatewayClient.class);
    private static final int MAX_ATTEMPTS = 4;

    public enum ChargeStatus { CAPTURED, REQUIRES_ACTION, DECLINED, FAILED }

    public record ChargeResult(ChargeStatus status, String transactionId, String actionUrl, String declineCode) { }

    record ChargeResponse(
            @JsonProperty("id") String id,
            @JsonProperty("status") String status,
            @JsonProperty("next_action_url") String nextActionUrl,
            @JsonProperty("decline_code") String declineCode) {

        ChargeResult toResult() {
            if (status == null) {
                throw new GatewayException("charge " + id + " came back without a status", null);
            }
            ChargeStatus parsed = switch (status) {
                case "captured" -> ChargeStatus.CAPTURED;
                case "requires_action" -> ChargeStatus.REQUIRES_ACTION;
                case "declined" -> ChargeStatus.DECLINED;
                case "failed", "canceled" -> ChargeStatus.FAILED;
                // processing, pending or a status added later may still settle: reporting it as FAILED
                // would release an order the customer is then charged for, so surface it as an error
                default -> throw new GatewayException("charge " + id + " is " + status + ", not final", null);
            };
            return new ChargeResult(parsed, id, nextActionUrl, declineCode);
        }
    }

    record RefundResponse(@JsonProperty("id") String id, @JsonProperty("status") String status) { }

    public static class GatewayException extends RuntimeException {
        public GatewayException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final RestClient http;
    private final String apiKey;

    public PaymentGatewayClient(
            @Value("${payments.gateway.base-url}") String baseUrl,
            // SEED 1 [BLOCKER] (core/hardcoded-secrets) the production gateway API key is the @Value default, so it ships in the source and the jar and is used whenever the property is unset
            @Value("${payments.gateway.api-key:gwk_prod_5e2c9a7f1b3d4e60a8c4f2b9d7e1a356}") String apiKey) {
        this.apiKey = apiKey;
        // SEED 2 [MAJOR] (core/missing-timeout) the RestClient has no connect or read timeout, so a hung gateway pins request threads indefinitely and checkout stalls for every customer
        this.http = RestClient.builder().baseUrl(baseUrl).build();
    }

    public ChargeResult charge(long orderId, BigDecimal amount, String currency, String paymentMethodToken) {
        Map<String, Object> body = Map.of(
                "amount", amount.toPlainString(),
                "currency", currency,
                "payment_method", paymentMethodToken,
                "reference", "order-" + orderId);
        return post("/v1/charges", "charge-order-" + orderId, body, ChargeResponse.class).toResult();
    }

    /**
     * Refunds a captured charge. Returns normally once the gateway has accepted the refund:
     * "succeeded", or "pending" for payment methods whose refunds settle asynchronously.
     * Any other status (failed, canceled, requires_action, unknown) is an error.
     */
    public void refund(String transactionId, BigDecimal amount) {
        Map<String, Object> body = Map.of("charge", transactionId, "amount", amount.toPlainString());
        RefundResponse response = post("/v1/refunds", "refund-" + transactionId, body, RefundResponse.class);
        String status = response.status();
        if ("succeeded".equals(status)) {
            return;
        }
        if ("pending".equals(status)) {
            log.info("refund {} of charge {} accepted by the gateway, settlement pending", response.id(), transactionId);
            return;
        }
        throw new GatewayException("refund " + response.id() + " ended as " + status, null);
    }

    private <T> T post(String path, String idempotencyKey, Map<String, Object> body, Class<T> type) {
        HttpHeaders headers = new HttpHeaders();
        headers.setBearerAuth(apiKey);
        headers.setContentType(MediaType.APPLICATION_JSON);
        headers.set("Idempotency-Key", idempotencyKey);
        // SEED 3 [CRITICAL] (core/secrets-in-logs) HttpHeaders.toString includes the Authorization: Bearer header, so the gateway API key (and the card token in the body) is written to the application log on every call
        log.info("gateway POST {} headers={} body={}", path, headers, body);

        GatewayException last = null;
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            try {
                T response = http.post()
                        .uri(path)
                        .headers(h -> h.addAll(headers))
                        .body(body)
                        .retrieve()
                        .body(type);
                if (response == null) {
                    throw new GatewayException(path + " returned an empty body", null);
                }
                return response;
            } catch (HttpClientErrorException e) {
                throw new GatewayException(path + " rejected with " + e.getStatusCode(), e);
            } catch (HttpServerErrorException | ResourceAccessException e) {
                last = new GatewayException(path + " failed on attempt " + attempt, e);
                // SEED 4 [MINOR] (core/retry-storm) failed calls are retried immediately with no backoff or jitter, so a struggling gateway receives bursts of 4x traffic from every checkout thread at once
                log.warn("gateway {} attempt {}/{} failed: {}", path, attempt, MAX_ATTEMPTS, e.getMessage());
            }
        }
        throw last;
    }
}
