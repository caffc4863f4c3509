using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Text;
using Billing.Api.Data;
using Microsoft.EntityFrameworkCore;

namespace Billing.Api.Services;

public interface IInvoiceService
{
    Task<Invoice> CreateAsync(Guid tenantId, CreateInvoiceRequest request, CancellationToken ct);
    Task<Invoice?> UpdateDraftAsync(Guid tenantId, int id, Invoice changes, CancellationToken ct);
    Task<Payment?> RecordPaymentAsync(Guid tenantId, int invoiceId, RecordPaymentRequest request, CancellationToken ct);
    Task<bool> VoidAsync(Guid tenantId, int invoiceId, string reason, CancellationToken ct);
    Task<IReadOnlyList<OverdueInvoiceDto>> GetOverdueAsync(Guid tenantId, CancellationToken ct);
    Task<byte[]> ExportCsvAsync(Guid tenantId, DateOnly from, DateOnly to, CancellationToken ct);
}

/// <summary>A billing rule was violated; the controller answers 409 with the message.</summary>
public sealed class BillingRuleException : Exception
{
    public BillingRuleException(string message)
        : base(message)
    {
    }
}

public sealed class InvoiceService : IInvoiceService
{
    private static readonly TimeSpan PaymentTerms = TimeSpan.FromDays(30);

    private readonly BillingDbContext _db;
    private readonly IInvoiceRepository _repository;
    private readonly IExchangeRateClient _rates;
    private readonly IEmailSender _email;
    private readonly TimeProvider _clock;
    private readonly ILogger<InvoiceService> _logger;

    public InvoiceService(
        BillingDbContext db,
        IInvoiceRepository repository,
        IExchangeRateClient rates,
        IEmailSender email,
        TimeProvider clock,
        ILogger<InvoiceService> logger)
    {
        _db = db;
        _repository = repository;
        _rates = rates;
        _email = email;
        _clock = clock;
        _logger = logger;
    }

    public async Task<Invoice> CreateAsync(Guid tenantId, CreateInvoiceRequest request, CancellationToken ct)
    {
        var customer = await _db.Customers
            .SingleOrDefaultAsync(c => c.TenantId == tenantId && c.Id == request.CustomerId, ct)
            ?? throw new BillingRuleException($"Customer {request.CustomerId} does not exist.");

        // SEED 13 [MAJOR] (core/float-money) the subtotal is summed in double and cast back with (decimal), which keeps only 15 significant digits: 11 lines of 9,999,999.99 x 99,999 (within the request limits) give a subtotal of 10,999,889,989,000.10 instead of .11, and tax is computed from the inexact base
        double subtotal = request.Lines.Sum(l => (double)l.UnitPrice * l.Quantity);
        var tax = Math.Round((decimal)subtotal * TaxRates.For(customer.BillingCountry), 2, MidpointRounding.AwayFromZero);

        // SEED 12 [MAJOR] (core/blocking-in-async) .Result blocks a thread-pool thread on an HTTP call inside an async request, starving the pool under load
        var rate = _rates.GetRateAsync(request.Currency, customer.Currency, ct).Result;

        // SEED 11 [MAJOR] (core/race-condition) MAX(Number) + 1 is read without a lock or sequence: two concurrent creates for a tenant get the same number and one fails on the unique index with a 500
        var number = (await _db.Invoices.Where(i => i.TenantId == tenantId).MaxAsync(i => (long?)i.Number, ct) ?? 0) + 1;

        var now = _clock.GetUtcNow().UtcDateTime;
        var invoice = new Invoice
        {
            TenantId = tenantId,
            Number = number,
            CustomerId = customer.Id,
            // BORDERLINE 4 invoices are created as Issued and nothing in this diff creates a Draft, so the draft-edit endpoint only works for drafts made by another flow; fine only if such a flow exists outside this diff
            Status = InvoiceStatus.Issued,
            Currency = request.Currency,
            ExchangeRateToCustomerCurrency = rate,
            Subtotal = (decimal)subtotal,
            TaxAmount = tax,
            Total = (decimal)subtotal + tax,
            IssuedAtUtc = now,
            DueAtUtc = now.Add(PaymentTerms),
            Lines = request.Lines
                .Select(l => new InvoiceLine { Description = l.Description, Quantity = l.Quantity, UnitPrice = l.UnitPrice })
                .ToList(),
        };
        _db.Invoices.Add(invoice);
        await _db.SaveChangesAsync(ct);
        return invoice;
    }

    /// <summary>
    /// Saves changes to a loaded invoice. Losing the RowVersion race to a concurrent request is a
    /// billing conflict the caller can retry (409), not a server error.
    /// </summary>
    private async Task SaveInvoiceChangesAsync(CancellationToken ct)
    {
        try
        {
            await _db.SaveChangesAsync(ct);
        }
        catch (DbUpdateConcurrencyException)
        {
            throw new BillingRuleException("The invoice was changed by another request; reload it and try again.");
        }
    }

    public async Task<Invoice?> UpdateDraftAsync(Guid tenantId, int id, Invoice changes, CancellationToken ct)
    {
        var existing = await _repository.FindAsync(tenantId, id, ct);
        if (existing is null)
        {
            return null;
        }
        if (existing.Status != InvoiceStatus.Draft)
        {
            throw new BillingRuleException("Only draft invoices can be edited.");
        }

        // SITE 8 SetValues copies every scalar of the client-supplied entity (bound from the request body in the controller) onto the tracked invoice
        changes.Id = existing.Id;
        _db.Entry(existing).CurrentValues.SetValues(changes);
        await SaveInvoiceChangesAsync(ct);
        return existing;
    }

    public async Task<Payment?> RecordPaymentAsync(
        Guid tenantId, int invoiceId, RecordPaymentRequest request, CancellationToken ct)
    {
        var invoice = await _repository.FindAsync(tenantId, invoiceId, ct);
        if (invoice is null)
        {
            return null;
        }
        if (invoice.Status != InvoiceStatus.Issued)
        {
            throw new BillingRuleException($"Invoice {invoice.Number} is {invoice.Status} and cannot be paid.");
        }
        if (request.Amount != invoice.Total)
        {
            throw new BillingRuleException("Partial payments are not supported.");
        }

        var payment = new Payment
        {
            InvoiceId = invoice.Id,
            Amount = request.Amount,
            Method = request.Method,
            ExternalReference = request.ExternalReference,
            ReceivedAtUtc = _clock.GetUtcNow().UtcDateTime,
        };
        _db.Payments.Add(payment);
        // SEED 10 [CRITICAL] (core/missing-transaction) the payment is committed by its own SaveChanges before the invoice is marked paid; if the second save fails (row-version conflict, timeout) the payment exists while the invoice stays Issued and can be paid again
        await _db.SaveChangesAsync(ct);

        invoice.Status = InvoiceStatus.Paid;
        invoice.PaidAtUtc = payment.ReceivedAtUtc;
        await SaveInvoiceChangesAsync(ct);

        try
        {
            await _email.SendPaymentReceiptAsync(invoice, payment, ct);
        }
        // SEED 15 [MINOR] (core/swallowed-error) every exception from the receipt email is discarded without logging, so SMTP outages and template bugs go unnoticed while customers never get receipts
        catch (Exception)
        {
        }

        return payment;
    }

    public async Task<bool> VoidAsync(Guid tenantId, int invoiceId, string reason, CancellationToken ct)
    {
        var invoice = await _repository.FindAsync(tenantId, invoiceId, ct);
        if (invoice is null)
        {
            return false;
        }
        if (invoice.Status == InvoiceStatus.Paid)
        {
            throw new BillingRuleException("Paid invoices must be refunded, not voided.");
        }
        if (invoice.Status == InvoiceStatus.Void)
        {
            throw new BillingRuleException($"Invoice {invoice.Number} is already void.");
        }
        invoice.Status = InvoiceStatus.Void;
        invoice.VoidReason = reason;
        await SaveInvoiceChangesAsync(ct);
        _logger.LogInformation("Invoice {InvoiceId} voided for tenant {TenantId}", invoice.Id, tenantId);
        return true;
    }

    public async Task<IReadOnlyList<OverdueInvoiceDto>> GetOverdueAsync(Guid tenantId, CancellationToken ct)
    {
        // SEED 14 [MAJOR] (core/wrong-timezone) DateTime.Now is server-local time but DueAtUtc is UTC, so invoices turn overdue hours early or late depending on the host's time zone
        var now = DateTime.Now;
        var overdue = await _db.Invoices
            .Where(i => i.TenantId == tenantId && i.Status == InvoiceStatus.Issued && i.DueAtUtc < now)
            .OrderBy(i => i.DueAtUtc)
            .AsNoTracking()
            .ToListAsync(ct);

        var result = new List<OverdueInvoiceDto>(overdue.Count);
        foreach (var invoice in overdue)
        {
            // SEED 5 [MAJOR] (core/n-plus-one) one Customers query per overdue invoice: a tenant with 2,000 overdue invoices costs 2,001 database round trips
            var customer = await _db.Customers.AsNoTracking().SingleAsync(c => c.Id == invoice.CustomerId, ct);
            var daysOverdue = (int)(now - invoice.DueAtUtc).TotalDays;
            result.Add(new OverdueInvoiceDto(
                invoice.Id, invoice.Number, customer.Name, customer.Email, invoice.Total, invoice.Currency, daysOverdue));
        }
        return result;
    }

    public async Task<byte[]> ExportCsvAsync(Guid tenantId, DateOnly from, DateOnly to, CancellationToken ct)
    {
        var start = from.ToDateTime(TimeOnly.MinValue, DateTimeKind.Utc);
        var end = to.AddDays(1).ToDateTime(TimeOnly.MinValue, DateTimeKind.Utc);
        var rows = await _db.Invoices
            .Where(i => i.TenantId == tenantId && i.IssuedAtUtc >= start && i.IssuedAtUtc < end)
            .OrderBy(i => i.Number)
            .Select(i => new { i.Number, Customer = i.Customer.Name, i.IssuedAtUtc, i.Total, i.Currency, i.Status })
            .ToListAsync(ct);

        var csv = new StringBuilder();
        csv.AppendLine("number,customer,issued_at,total,currency,status");
        foreach (var row in rows)
        {
            csv.Append(row.Number.ToString(CultureInfo.InvariantCulture)).Append(',')
                .Append(Csv.Escape(row.Customer)).Append(',')
                .Append(row.IssuedAtUtc.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture)).Append(',')
                // SEED 16 [MINOR] (core/i18n) ToString("C") uses the server's current culture, so the symbol and decimal separator change with the host locale (e.g. "1.234,50 €") and the amount column stops parsing
                .Append(row.Total.ToString("C")).Append(',')
                .Append(Csv.Escape(row.Currency)).Append(',')
                .Append(row.Status.ToString())
                .AppendLine();
        }
        return Encoding.UTF8.GetBytes(csv.ToString());
    }
}

internal static class Csv
{
    /// <summary>Quotes a field and neutralises leading formula characters for spreadsheet safety.</summary>
    public static string Escape(string value)
    {
        if (value.Length > 0 && "=+-@\t\r".Contains(value[0]))
        {
            value = "'" + value;
        }
        return "\"" + value.Replace("\"", "\"\"") + "\"";
    }
}

/// <summary>
/// Rejects amounts with more than two decimal places: money columns are decimal(18,2), so a finer
/// amount would be stored rounded and no longer match the totals computed from it.
/// </summary>
[AttributeUsage(AttributeTargets.Parameter | AttributeTargets.Property)]
public sealed class MoneyScaleAttribute : ValidationAttribute
{
    public MoneyScaleAttribute()
        : base("The field {0} must have at most two decimal places.")
    {
    }

    public override bool IsValid(object? value) => value is not decimal amount || decimal.Round(amount, 2) == amount;
}

public sealed record InvoiceLineRequest(
    [Required, StringLength(500)] string Description,
    [Range(1, 100_000)] int Quantity,
    [Range(typeof(decimal), "0", "10000000"), MoneyScale] decimal UnitPrice);

public sealed record CreateInvoiceRequest(
    int CustomerId,
    [Required, RegularExpression("^[A-Z]{3}$")] string Currency,
    [Required, MinLength(1), MaxLength(500)] IReadOnlyList<InvoiceLineRequest> Lines);

public sealed record RecordPaymentRequest(
    [Range(typeof(decimal), "0.01", "10000000"), MoneyScale] decimal Amount,
    [Required, StringLength(32)] string Method,
    [Required, StringLength(128)] string ExternalReference);

public sealed record OverdueInvoiceDto(
    int Id, long Number, string CustomerName, string CustomerEmail, decimal Total, string Currency, int DaysOverdue);
