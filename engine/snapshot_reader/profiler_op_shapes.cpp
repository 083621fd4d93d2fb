#include "profiler_op_shapes.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "oomlab/allocator/cuda_reduction.h"

namespace oomlab::snapshot {
namespace {

// Widths up to 2^20 (channels, features, hidden sizes) and tensors up to 2^48 bytes.
constexpr std::int64_t kWidestCall = std::int64_t{1} << 20;
constexpr double kMostCallBytes = double(std::int64_t{1} << 48);

std::int64_t element_of(const std::string& type) {
    return type == "double" ? 8 : type == "c10::Half" || type == "c10::BFloat16" ? 2 : 4;
}

bool positive(const std::vector<std::int64_t>& dims) {
    return std::all_of(dims.begin(), dims.end(), [](std::int64_t n) { return n > 0; });
}

double bytes_of(const std::vector<std::int64_t>& dims, std::int64_t element) {
    double bytes = double(element);
    for (const std::int64_t n : dims) {
        bytes *= double(n);
    }
    return bytes;
}

// A scalar list as the profiler writes it, "[1, 1]"; nothing if it is not one.
std::optional<std::vector<std::int64_t>> int_list(const std::string& text) {
    if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
        return std::nullopt;
    }
    std::vector<std::int64_t> values;
    const char* at = text.data() + 1;
    const char* const end = text.data() + text.size() - 1;
    while (at < end) {
        while (at < end && (*at == ' ' || *at == ',')) {
            ++at;
        }
        if (at == end) {
            break;
        }
        std::int64_t value = 0;
        const auto [next, error] = std::from_chars(at, end, value);
        if (error != std::errc{} || values.size() >= 3) {
            return std::nullopt;
        }
        values.push_back(value);
        at = next;
    }
    return values;
}

// Each spatial side of `list` (one value meaning every side, as PyTorch broadcasts it).
bool spatial(const std::string& text, int dims, std::array<std::int64_t, 3>& sides,
             std::int64_t lowest) {
    const auto values = int_list(text);
    if (!values || (values->size() != 1 && values->size() != std::size_t(dims))) {
        return false;
    }
    for (int d = 0; d < dims; ++d) {
        sides[d] = (*values)[values->size() == 1 ? 0 : d];
        if (sides[d] < lowest || sides[d] > kWidestCall) {
            return false;
        }
    }
    return true;
}

}  // namespace

std::optional<SnapshotRecurrentCall> recurrent_call(const std::string& op,
                                                    const TraceOpInputs& in) {
    // (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first),
    // the input [B, T, I] or [T, B, I] (or [T, I]), hx [layers x directions, B, H] (an LSTM's
    // first of two). Older profilers wrote no dims for lists of tensors (hx).
    if (in.dims.size() < 2 || in.concrete.size() != 9 || in.dims[1].size() != 3) {
        return std::nullopt;
    }
    const std::vector<std::int64_t>& x = in.dims[0];
    if ((x.size() != 2 && x.size() != 3) || !positive(x) || in.dims[1][2] <= 0) {
        return std::nullopt;
    }
    SnapshotRecurrentCall call;
    call.batch_first = in.concrete[8] == "True";
    allocator::RnnShape& shape = call.shape;
    shape.gru = op == "aten::gru";
    shape.directions = in.concrete[7] == "True" ? 2 : 1;
    shape.layers = std::atoll(in.concrete[4].c_str());
    if (shape.layers < 1 || shape.layers > 64) {
        return std::nullopt;
    }
    shape.length = x.size() == 2 || !call.batch_first ? x[0] : x[1];
    shape.batch = x.size() == 2 ? 1 : call.batch_first ? x[0] : x[1];
    shape.input = x.back();
    shape.hidden = in.dims[1][2];
    shape.element = element_of(in.first_type);
    const double tokens = double(shape.length) * double(shape.batch) * double(shape.element);
    if (shape.input > kWidestCall || shape.hidden > kWidestCall ||
        tokens * double(shape.input) > kMostCallBytes ||
        tokens * double(shape.directions * shape.hidden) > kMostCallBytes) {
        return std::nullopt;
    }
    return call;
}

bool is_recurrent(const std::string& op) {
    return op == "aten::lstm" || op == "aten::gru";
}

bool is_convolution(const std::string& op) {
    return op == "aten::convolution" || op == "aten::convolution_backward";
}

std::optional<SnapshotConvolutionCall> convolution_call(const std::string& op,
                                                        const TraceOpInputs& in) {
    // Forward: (input, weight, bias, stride, padding, dilation, transposed, output_padding,
    // groups). Backward: (grad_output, input, weight, bias_sizes, stride, padding, dilation,
    // transposed, output_padding, groups, output_mask). Input [B, C, spatial...], weight
    // [O, C / groups, kernel...].
    SnapshotConvolutionCall call;
    call.backward = op == "aten::convolution_backward";
    const std::size_t first = call.backward ? 1 : 0;  // the input's place
    const std::size_t scalars = first + 3;            // stride's
    if (in.dims.size() < first + 2 || in.concrete.size() != (call.backward ? 11 : 9)) {
        return std::nullopt;
    }
    const std::vector<std::int64_t>& x = in.dims[first];
    const std::vector<std::int64_t>& weight = in.dims[first + 1];
    if (x.size() < 3 || x.size() > 5 || weight.size() != x.size() || !positive(x) ||
        !positive(weight)) {
        return std::nullopt;
    }
    allocator::ConvShape& shape = call.shape;
    shape.dims = int(x.size()) - 2;
    shape.batch = x[0];
    shape.in_channels = x[1];
    shape.out_channels = weight[0];
    for (int d = 0; d < shape.dims; ++d) {
        shape.size[d] = x[2 + d];
        shape.kernel[d] = weight[2 + d];
        if (shape.kernel[d] > kWidestCall) {
            return std::nullopt;
        }
    }
    shape.transposed = in.concrete[scalars + 3] == "True";
    shape.groups = std::atoll(in.concrete[scalars + 5].c_str());
    shape.element = element_of(in.first_type);
    if (!spatial(in.concrete[scalars], shape.dims, shape.stride, 1) ||
        !spatial(in.concrete[scalars + 1], shape.dims, shape.padding, 0) ||
        !spatial(in.concrete[scalars + 2], shape.dims, shape.dilation, 1) || shape.groups < 1 ||
        shape.in_channels > kWidestCall || shape.out_channels > kWidestCall ||
        bytes_of(x, shape.element) > kMostCallBytes ||
        bytes_of(weight, shape.element) > kMostCallBytes) {
        return std::nullopt;
    }
    std::vector<std::int64_t> output{shape.batch, shape.out_channels};
    for (int d = 0; d < shape.dims; ++d) {
        output.push_back(shape.out_size(d));
    }
    if (bytes_of(output, shape.element) > kMostCallBytes) {
        return std::nullopt;
    }
    if (call.backward) {
        const std::string& mask = in.concrete[10];  // "[True, True, False]"
        call.input_gradient = mask.rfind("[True", 0) == 0;
        const std::size_t second = mask.find(',');
        call.weight_gradient =
            second != std::string::npos && mask.compare(second, 6, ", True") == 0;
    }
    return call;
}

std::optional<SnapshotAttentionCall> attention_call(const TraceOpInputs& in) {
    // (query, key, value, attn_mask, dropout_p, is_causal, ...): each [..., length, width].
    if (in.dims.size() < 3) {
        return std::nullopt;
    }
    SnapshotAttentionCall call;
    call.element = element_of(in.first_type);
    std::int64_t* bytes[] = {&call.query_bytes, &call.key_bytes, &call.value_bytes};
    for (std::size_t i = 0; i < 3; ++i) {
        const std::vector<std::int64_t>& dims = in.dims[i];
        const double size = bytes_of(dims, call.element);
        if (dims.size() < 2 || !positive(dims) || size > kMostCallBytes) {
            return std::nullopt;
        }
        *bytes[i] = std::int64_t(size);
    }
    const std::vector<std::int64_t>& query = in.dims[0];
    const double rows = bytes_of(query, 1) / double(query.back() * query[query.size() - 2]);
    call.logsumexp_bytes = std::int64_t(rows) * ((query[query.size() - 2] + 31) / 32 * 32) * 4;
    return call;
}

bool is_dropout(const std::string& op) {
    return op == "aten::dropout";
}

std::optional<std::int64_t> dropout_mask_bytes(const TraceOpInputs& in) {
    // (input, p, train): only a dropout in training with 0 < p < 1 makes noise.
    if (in.dims.empty() || in.concrete.size() != 3 || in.concrete[2] != "True" ||
        !positive(in.dims[0])) {
        return std::nullopt;
    }
    const double p = std::strtod(in.concrete[1].c_str(), nullptr);
    const double elements = bytes_of(in.dims[0], 1);
    if (!(p > 0 && p < 1) || elements > kMostCallBytes) {
        return std::nullopt;
    }
    return std::int64_t(elements);
}

bool is_sum(const std::string& op) {
    return op == "aten::sum";
}

std::optional<std::int64_t> sum_buffer_bytes(const TraceOpInputs& in) {
    // (input, dim, keepdim, dtype): the dims summed, "[0, 1]", the first ones of the input's.
    if (in.dims.empty() || in.concrete.size() < 2 || in.first_type != "float" ||
        !positive(in.dims[0]) || bytes_of(in.dims[0], 4) > kMostCallBytes) {
        return std::nullopt;
    }
    const std::vector<std::int64_t>& x = in.dims[0];
    const auto summed = int_list(in.concrete[1]);
    if (!summed || summed->empty() || summed->size() >= x.size()) {
        return std::nullopt;
    }
    std::int64_t rows = 1;
    for (std::size_t d = 0; d < summed->size(); ++d) {
        if ((*summed)[d] != std::int64_t(d)) {
            return std::nullopt;
        }
        rows *= x[d];
    }
    const std::int64_t columns = std::int64_t(bytes_of(x, 1)) / rows;
    return allocator::cuda_sum_buffer_bytes(rows, columns);
}

bool is_matrix_product(const std::string& op) {
    static const std::array<const char*, 8> kCublas = {
        "aten::mm",     "aten::addmm", "aten::bmm", "aten::baddbmm",
        "aten::addbmm", "aten::addmv", "aten::mv",  "aten::_addmm_activation"};
    return std::any_of(kCublas.begin(), kCublas.end(),
                       [&](const char* name) { return op == name; });
}

}  // namespace oomlab::snapshot
