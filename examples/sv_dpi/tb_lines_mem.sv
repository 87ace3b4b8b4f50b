// tb_lines with `$readmemh` instead of a $fscanf loop: a `--lines hex` file is a memory image of
// 14 words per line (docs/line-vectors.md), loaded whole, then run through dot32_e2m1 line by
// line; the results go to a file for `fp4sim check --lines`. Plain IEEE 1800, no DPI.
//
//   fp4sim vectors --suite corners --lines hex --only mxf8f6f4-e2m1 --out corners.hex
//   obj_dir/Vtb_lines_mem +lines=corners.hex +results=dut.txt [+plant_bug]
//   fp4sim check --lines corners.hex --results dut.txt
module tb_lines_mem;
  localparam logic [31:0] UNIT_CONFIG = 32'h2200_0020;  // mxf8f6f4, blackwell, E2M1 x E2M1, UE8M0 / 32
  localparam int MAX_LINES = 4096;
  localparam int WORDS = 14;  // case m n s S config A B SA SB C D flags alpha

  logic [127:0] a, b;
  logic [7:0] sa, sb;
  logic [31:0] c;
  logic [31:0] d_good, d_bug;

  dot32_e2m1 #(.PLANT_BUG(1'b0)) u_good (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_good));
  dot32_e2m1 #(.PLANT_BUG(1'b1)) u_bug (.a(a), .b(b), .sa(sa), .sb(sb), .c(c), .d(d_bug));

  logic [511:0] mem[WORDS * MAX_LINES];

  string lines_path, results_path, unit_name;
  int out, n, ran, skipped;
  bit plant_bug;
  logic [511:0] w_a, w_b;
  logic [31:0] got;

  // Drives the unit with line i and writes its result line (D only: the unit computes no flags).
  task automatic run_line(input int i);
    w_a = mem[WORDS * i + 6];
    w_b = mem[WORDS * i + 7];
    for (int k = 0; k < 32; k++) begin  // 8-bit codes to the unit's 4-bit E2M1
      a[4*k+:4] = w_a[8*k+:4];
      b[4*k+:4] = w_b[8*k+:4];
    end
    sa = mem[WORDS * i + 8][7:0];
    sb = mem[WORDS * i + 9][7:0];
    c = mem[WORDS * i + 10][31:0];
    #1;
    got = plant_bug ? d_bug : d_good;
    $fdisplay(out, "%08h", got);
    ran = ran + 1;
  endtask

  initial begin
    if (!$value$plusargs("lines=%s", lines_path)) $fatal(1, "tb_lines_mem: give +lines=FILE (fp4sim vectors --lines hex)");
    if (!$value$plusargs("results=%s", results_path)) $fatal(1, "tb_lines_mem: give +results=FILE");
    plant_bug = $test$plusargs("plant_bug");
    unit_name = plant_bug ? "planted-bug" : "correct";
    // All ones marks the words the file does not reach: no field of a line is 512 bits of ones.
    for (int i = 0; i < WORDS * MAX_LINES; i++) mem[i] = '1;
    $readmemh(lines_path, mem);
    n = 0;
    while (n < MAX_LINES && mem[WORDS * n] != '1) n = n + 1;
    if (n == MAX_LINES && mem[WORDS * MAX_LINES - 1] != '1)
      $fatal(1, "tb_lines_mem: %s: %0d lines or more fill the memory; raise MAX_LINES", lines_path, MAX_LINES);
    out = $fopen(results_path, "w");
    if (out == 0) $fatal(1, "tb_lines_mem: %s: cannot write", results_path);
    ran = 0;
    skipped = 0;
    for (int i = 0; i < n; i++) begin
      if (mem[WORDS * i + 5] != 512'(UNIT_CONFIG)) skipped = skipped + 1;
      else run_line(i);
    end
    $fclose(out);
    $display("tb_lines_mem: %0d lines loaded, %0d instructions run (%s unit), %0d lines of other configurations skipped",
             n, ran, unit_name, skipped);
    $finish;
  end
endmodule
