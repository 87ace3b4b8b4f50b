// Checks dot32_e2m1 against fp4sim's golden blackwell model through DPI-C (fp4sim_dpi_pkg):
// directed corners, then seeded random instructions. Plain SV + DPI, $display and $fatal, so any
// simulator runs it as Verilator does. Plusargs:
//   +n=N           random instructions (default 20000)
//   +seed=S        seed of the stimulus generator (default 1; a simulator-independent xorshift32)
//   +plant_bug     check the planted-bug instance instead of the correct one
//   +no_directed   random instructions only
// On the first mismatch it prints the instruction and exits non-zero ($fatal); otherwise "PASS".
module tb_dot32;
  import fp4sim_dpi_pkg::*;

  logic [127:0] a, b;
  logic [7:0] sa, sb;
  logic [31:0] c;
  logic [31:0] d_good, d_bug;

  dot32_e2m1 #(.PLANT_BUG(1'b0)) u_good (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_good));
  dot32_e2m1 #(.PLANT_BUG(1'b1)) u_bug (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_bug));

  int unsigned rng;
  bit plant_bug;

  function automatic int unsigned next();
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
  endfunction

  // Applies the operands, asks fp4sim for D and the flags, compares.
  task automatic check(input int idx);
    byte unsigned ea[FP4SIM_MAX_K], eb[FP4SIM_MAX_K];
    int unsigned s_a[FP4SIM_MAX_SCALES], s_b[FP4SIM_MAX_SCALES];
    int unsigned exp_d;
    int flags, rc;
    logic [31:0] got;
    for (int k = 0; k < FP4SIM_MAX_K; k++) begin
      ea[k] = (k < 32) ? 8'(a[4*k+:4]) : 8'd0;
      eb[k] = (k < 32) ? 8'(b[4*k+:4]) : 8'd0;
    end
    for (int s = 0; s < FP4SIM_MAX_SCALES; s++) begin
      s_a[s] = 32'(sa);
      s_b[s] = 32'(sb);
    end
    rc = fp4sim_dpi_mma(FP4SIM_MXF8F6F4, FP4SIM_BLACKWELL, FP4SIM_E2M1, FP4SIM_E2M1, FP4SIM_UE8M0, 32,
                        ea, eb, s_a, s_b, c, exp_d, flags);
    if (rc != FP4SIM_OK) $fatal(1, "fp4sim_dpi_mma failed: %s", fp4sim_dpi_last_error());
    #1;
    got = plant_bug ? d_bug : d_good;
    if (got !== exp_d) begin
      $display("MISMATCH at instruction %0d (%s unit)", idx, unit_name);
      $display("  a  = %032h (E2M1 codes, element k = bits 4k+3:4k)", a);
      $display("  b  = %032h", b);
      $display("  sa = %02h  sb = %02h (UE8M0)  c = %08h (FP32)", sa, sb, c);
      $display("  expected D = %08h  flags = %02h (inexact 1, underflow 2, overflow 4, invalid 16)", exp_d, flags);
      $display("  got      D = %08h", got);
      $fatal(1, "first mismatch at instruction %0d", idx);
    end
  endtask

  task automatic zero_ops();
    a = '0;
    b = '0;
    sa = 8'd127;
    sb = 8'd127;
    c = 32'd0;
  endtask

  int n, idx, seed;
  string unit_name;

  task automatic step();
    check(idx);
    idx = idx + 1;
  endtask
  int unsigned r, e;

  initial begin
    if (!$value$plusargs("n=%d", n)) n = 20000;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    plant_bug = $test$plusargs("plant_bug");
    unit_name = plant_bug ? "planted-bug" : "correct";
    rng = (seed == 0) ? 32'h1234_5678 : int'(seed);
    idx = 0;
    if (!$test$plusargs("no_directed")) begin
      zero_ops();  step();                                    // 0: all zero
      zero_ops();  sa = 8'hFF;  step();                       // 1: NaN scale
      zero_ops();  c = 32'h7FC0_0000;  step();                // 2: NaN C
      zero_ops();  c = 32'h7F80_0000;  step();                // 3: +Inf C
      zero_ops();  c = 32'h3F80_0000;  step();                // 4: C = 1 beside zero products
      // 5: C aligned below the product: 6 * 6 + -(2 + 2^-21) = 34 - 2^-21, C truncated to 2^-21
      zero_ops();  a[3:0] = 4'h7;  b[3:0] = 4'h7;  c = 32'hC000_0002;  step();
      zero_ops();  c = 32'hFF80_0000;  step();                // 6: -Inf C
      zero_ops();  a = {32{4'h7}};  b = {32{4'h7}};  sa = 8'd254;  sb = 8'd254;  step();  // 7: overflow
      zero_ops();  a = {32{4'h7}};  b = {32{4'h7}};  sa = 8'd0;  sb = 8'd0;  step();      // 8: underflow
      zero_ops();  a[7:0] = 8'hF7;  b[7:0] = 8'h77;  step();  // 9: 6*6 - 6*6 = +0
      zero_ops();  sa = 8'd200;  sb = 8'd200;  c = 32'h0000_0123;  step();  // 10: subnormal C, zeros at big scales
      zero_ops();  a = {32{4'hA}};  b = {32{4'h2}};  c = 32'h3F80_0000;  step();  // 11: -1*1*32 + 1
    end
    for (int i = 0; i < n; i++) begin
      for (int w = 0; w < 4; w++) begin
        a[32*w+:32] = next();
        b[32*w+:32] = next();
      end
      r = next() % 100;
      // Scales mostly near 1 (sums stay normal), sometimes anywhere, rarely NaN.
      sa = (r < 80) ? 8'(117 + next() % 21) : (r < 99) ? 8'(next() % 255) : 8'hFF;
      r = next() % 100;
      sb = (r < 80) ? 8'(117 + next() % 21) : (r < 99) ? 8'(next() % 255) : 8'hFF;
      // C: near the products' exponent (where its alignment matters), zero, or special.
      r = next() % 100;
      if (r < 85) begin
        e = 32'(int'(sa) + int'(sb) - 127 - 24 + int'(next() % 32));
        if (int'(e) < 0) e = 0;
        if (e > 254) e = 254;
        c = {1'(next()), 8'(e), 23'(next())};
      end else if (r < 93) c = {1'(next()), 31'd0};
      else if (r < 97) c = {1'(next()), 8'd0, 23'(next())};
      else if (r < 99) c = {1'(next()), 8'hFF, 23'd0};
      else c = 32'h7FC0_0000;
      step();
    end
    $display("PASS: %0d instructions (%s unit) match fp4sim blackwell, seed %0d", idx, unit_name, seed);
    $finish;
  end
endmodule
