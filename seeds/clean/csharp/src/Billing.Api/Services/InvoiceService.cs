using System.ComponentModel.DataAnnotations;
using System.Globalization;
using System.Text;
using Billing.Api.Data;
using Microsoft.EntityFrameworkCore;

namespace Billing.Api.Services;

public interface IInvoiceService
{
    Task<Invoice> CreateAsync(Guid tenantId, CreateInvoiceRequest request, CancellationToken ct);
    Task<Invoice?> UpdateDraftAsync(Guid tenantId, int id, UpdateInvoiceRequest request, CancellationToken ct);
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

    /// <summary>The largest payment RecordPaymentRequest accepts (its Range); keep the two in step.</summary>
    internal const decimal MaxPayableAmount = 10_000_000m;

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

        var subtotal = request.Lines.Sum(l => l.UnitPrice * l.Quantity);
        var tax = Math.Round(subtotal * TaxRates.For(customer.BillingCountry), 2, MidpointRounding.AwayFromZero);
        EnsurePayable(subtotal + tax);

        var rate = await _rates.GetRateAsync(request.Currency, customer.Currency, ct);

        await using var transaction = await _db.Database.BeginTransactionAsync(ct);
        var number = await NextInvoiceNumberAsync(tenantId, ct);

        var now = _clock.GetUtcNow().UtcDateTime;
        var invoice = new Invoice
        {
            TenantId = tenantId,
            Number = number,
            CustomerId = customer.Id,
            // BORDERLINE 3 invoices are created as Issued and nothing in this diff creates a Draft, so the draft-edit endpoint only works for drafts made by another flow; fine only if such a flow exists outside this diff
            Status = InvoiceStatus.Issued,
            Currency = request.Currency,
            ExchangeRateToCustomerCurrency = rate,
            Subtotal = subtotal,
            TaxAmount = tax,
            Total = subtotal + tax,
            IssuedAtUtc = now,
            DueAtUtc = now.Add(PaymentTerms),
            Lines = request.Lines
                .Select(l => new InvoiceLine { Description = l.Description, Quantity = l.Quantity, UnitPrice = l.UnitPrice })
                .ToList(),
        };
        _db.Invoices.Add(invoice);
        await _db.SaveChangesAsync(ct);
        await transaction.CommitAsync(ct);
        return invoice;
    }

    /// <summary>
    /// Payments must equal the total and are limited to 0.01..MaxPayableAmount, so an invoice
    /// outside that range could never be paid; refuse it instead of issuing it.
    /// </summary>
    private static void EnsurePayable(decimal total)
    {
        if (total <= 0m || total > MaxPayableAmount)
        {
            throw new BillingRuleException(
                $"An invoice total must be more than 0 and at most {MaxPayableAmount.ToString("0.00", CultureInfo.InvariantCulture)}.");
        }
    }

    /// <summary>
    /// Atomically increments the tenant's counter row (created together with the tenant), so
    /// concurrent creates get distinct numbers and a rolled-back create does not burn one.
    /// </summary>
    private async Task<long> NextInvoiceNumberAsync(Guid tenantId, CancellationToken ct)
    {
        var numbers = await _db.Database
            .SqlQuery<long>($"UPDATE InvoiceCounters SET LastNumber = LastNumber + 1 OUTPUT inserted.LastNumber AS [Value] WHERE TenantId = {tenantId}")
            .ToListAsync(ct);
        return numbers.Count == 1
            ? numbers[0]
            : throw new InvalidOperationException($"No invoice counter exists for tenant {tenantId}.");
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

    public async Task<Invoice?> UpdateDraftAsync(Guid tenantId, int id, UpdateInvoiceRequest request, CancellationToken ct)
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

        existing.DueAtUtc = request.DueAt.UtcDateTime;
        existing.Lines.Clear();
        existing.Lines.AddRange(request.Lines.Select(l =>
            new InvoiceLine { Description = l.Description, Quantity = l.Quantity, UnitPrice = l.UnitPrice }));
        existing.Subtotal = existing.Lines.Sum(l => l.UnitPrice * l.Quantity);
        existing.TaxAmount = Math.Round(
            existing.Subtotal * TaxRates.For(existing.Customer.BillingCountry), 2, MidpointRounding.AwayFromZero);
        existing.Total = existing.Subtotal + existing.TaxAmount;
        EnsurePayable(existing.Total);
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
        invoice.Status = InvoiceStatus.Paid;
        invoice.PaidAtUtc = payment.ReceivedAtUtc;
        await SaveInvoiceChangesAsync(ct);

        try
        {
            await _email.SendPaymentReceiptAsync(invoice, payment, ct);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            _logger.LogWarning(ex, "Receipt email for invoice {InvoiceId} could not be sent", invoice.Id);
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

    // BORDERLINE 5 returns every overdue invoice with the customer's e-mail in one unpaged response to any tenant user; fine only if per-tenant overdue volumes stay small and the role model (outside this diff) lets all tenant users see customer contacts
    public async Task<IReadOnlyList<OverdueInvoiceDto>> GetOverdueAsync(Guid tenantId, CancellationToken ct)
    {
        var now = _clock.GetUtcNow().UtcDateTime;
        var overdue = await _db.Invoices
            .Include(i => i.Customer)
            .Where(i => i.TenantId == tenantId && i.Status == InvoiceStatus.Issued && i.DueAtUtc < now)
            .OrderBy(i => i.DueAtUtc)
            .AsNoTracking()
            .ToListAsync(ct);

        var result = new List<OverdueInvoiceDto>(overdue.Count);
        foreach (var invoice in overdue)
        {
            var customer = invoice.Customer;
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
                .Append(row.Total.ToString("0.00", CultureInfo.InvariantCulture)).Append(',')
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

public sealed record UpdateInvoiceRequest(
    DateTimeOffset DueAt,
    [Required, MinLength(1), MaxLength(500)] IReadOnlyList<InvoiceLineRequest> Lines);

public sealed record RecordPaymentRequest(
    [Range(typeof(decimal), "0.01", "10000000"), MoneyScale] decimal Amount,
    [Required, StringLength(32)] string Method,
    [Required, StringLength(128)] string ExternalReference);

public sealed record OverdueInvoiceDto(
    int Id, long Number, string CustomerName, string CustomerEmail, decimal Total, string Currency, int DaysOverdue);
