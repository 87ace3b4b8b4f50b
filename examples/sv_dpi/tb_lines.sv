// Runs dot32_e2m1 on fp4sim's line vectors (docs/line-vectors.md) and writes its results for
// `fp4sim check --lines`. Plain IEEE 1800 (no DPI, no fp4sim library): a $fscanf loop over a
// `--lines testfloat` file, so any simulator runs it.
//
//   fp4sim vectors --suite corners --lines testfloat --only mxf8f6f4-e2m1 --out corners.tf
//   obj_dir/Vtb_lines +lines=corners.tf +results=dut.txt [+plant_bug]
//   fp4sim check --lines corners.tf --results dut.txt
//
// Each line is one instruction with its own C (a chained case's later instructions carry the
// expected D of the one before), so the combinational unit computes every line on its own. Lines
// of another configuration word are skipped and get no result line: check pairs results with lines
// one to one, so the file should hold only the unit's configuration (--only above). The testbench
// also compares with the line's D itself and prints a summary; the verdict is check's.
module tb_lines;
  // The configuration word of the unit: mxf8f6f4 (2), blackwell (2), E2M1 x E2M1 (0, 0), UE8M0 (0),
  // block 32.
  localparam logic [31:0] UNIT_CONFIG = 32'h2200_0020;

  logic [127:0] a, b;
  logic [7:0] sa, sb;
  logic [31:0] c;
  logic [31:0] d_good, d_bug;

  dot32_e2m1 #(.PLANT_BUG(1'b0)) u_good (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_good));
  dot32_e2m1 #(.PLANT_BUG(1'b1)) u_bug (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_bug));

  // One line's fields, wide enough for every kind (64 codes of 8 bits, 4 scale words).
  logic [31:0] cfg, lc, ld;
  logic [511:0] la, lb;
  logic [127:0] lsa, lsb;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [7:0] lflags;  // read past: the unit computes no flags
  /* verilator lint_on UNUSEDSIGNAL */

  string lines_path, results_path, unit_name;
  int fd, out, fields, line_no, ran, skipped, differ, first_differ;
  bit plant_bug;
  logic [31:0] got;

  // Reads the next line's 8 fields; returns how many it read (-1 at the end of the file).
  function automatic int read_line();
    fields = $fscanf(fd, "%h %h %h %h %h %h %h %h\n", cfg, la, lb, lsa, lsb, lc, ld, lflags);
    return fields;
  endfunction

  // Drives the unit with the line just read and writes its result line.
  task automatic run_line();
    // Codes arrive zero-extended to 8 bits (code k = la[8k +: 8]), 32 of them, and one scale per
    // operand zero-extended to 32 bits: anything above is a misread line.
    if (la[511:256] != '0 || lb[511:256] != '0 || lsa[127:8] != '0 || lsb[127:8] != '0)
      $fatal(1, "tb_lines: %s:%0d: more than 32 codes or 1 scale for configuration %08h", lines_path, line_no, cfg);
    for (int k = 0; k < 32; k++) begin
      if (la[8*k+4+:4] != 4'd0 || lb[8*k+4+:4] != 4'd0)
        $fatal(1, "tb_lines: %s:%0d: code %0d is not a 4-bit E2M1 code", lines_path, line_no, k);
      a[4*k+:4] = la[8*k+:4];
      b[4*k+:4] = lb[8*k+:4];
    end
    sa = lsa[7:0];
    sb = lsb[7:0];
    c = lc;
    #1;
    got = plant_bug ? d_bug : d_good;
    // D only: the unit computes no flags (check compares flags only where a result gives them).
    $fdisplay(out, "%08h", got);
    ran = ran + 1;
    if (got !== ld) begin
      differ = differ + 1;
      if (first_differ == 0) first_differ = line_no;
    end
  endtask

  initial begin
    if (!$value$plusargs("lines=%s", lines_path)) $fatal(1, "tb_lines: give +lines=FILE (fp4sim vectors --lines testfloat)");
    if (!$value$plusargs("results=%s", results_path)) $fatal(1, "tb_lines: give +results=FILE");
    plant_bug = $test$plusargs("plant_bug");
    unit_name = plant_bug ? "planted-bug" : "correct";
    fd = $fopen(lines_path, "r");
    if (fd == 0) $fatal(1, "tb_lines: %s: cannot open", lines_path);
    out = $fopen(results_path, "w");
    if (out == 0) $fatal(1, "tb_lines: %s: cannot write", results_path);
    line_no = 0;
    ran = 0;
    skipped = 0;
    differ = 0;
    first_differ = 0;
    while (read_line() == 8) begin
      line_no = line_no + 1;
      if (cfg != UNIT_CONFIG) skipped = skipped + 1;
      else run_line();
    end
    // Some fields but not 8: a line that is no testfloat line (the end of the file reads none).
    if (fields > 0) $fatal(1, "tb_lines: %s:%0d: not a testfloat line (8 hex fields)", lines_path, line_no + 1);
    $fclose(fd);
    $fclose(out);
    if (ran == 0) $fatal(1, "tb_lines: %s: no line of the unit's configuration %08h", lines_path, UNIT_CONFIG);
    $display("tb_lines: %0d instructions run (%s unit), %0d lines of other configurations skipped, %0d differ from the file's D%s",
             ran, unit_name, skipped, differ,
             differ != 0 ? $sformatf(" (first on line %0d)", first_differ) : "");
    $finish;
  end
endmodule
