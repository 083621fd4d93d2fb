// What a rank reads from the rendezvous store, written by another process: rank 0's ticket
// (the run to join) and another rank's report of how it ended. Any bytes give a value or, for
// a ticket, Error; what is read writes back as the same value.
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/session/experiment.h"
#include "session/run_join.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const oomlab::RunTicket ticket = oomlab::parse_run_ticket(text);
        const oomlab::RunTicket again = oomlab::parse_run_ticket(oomlab::run_ticket_text(ticket));
        if (again.run_id != ticket.run_id || again.uid != ticket.uid ||
            again.config_json != ticket.config_json) {
            __builtin_trap();
        }
    } catch (const oomlab::Error&) {
    }
    if (const auto outcome = oomlab::session::parse_rank_report(text)) {
        const auto again =
            oomlab::session::parse_rank_report(oomlab::session::rank_report(*outcome));
        if (!again || again->steps != outcome->steps || again->peak_bytes != outcome->peak_bytes ||
            again->by_module.size() > outcome->by_module.size()) {
            __builtin_trap();
        }
    }
    return 0;
}
