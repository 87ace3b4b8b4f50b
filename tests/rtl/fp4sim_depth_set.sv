// Test-only top (tests/rtl/test_rtl_depths.cpp): one datapath unit at PipeDepth 1..NumDepths side
// by side, lane n = PipeDepth n+1, each lane with its own ports. One Verilated model per unit then
// covers every depth (the unit's front and back end are compiled once, not once per depth), and
// the test runs independent handshakes on all lanes in the same cycles.
// Only the units' PipeDepth parameter and their common ports are used.
module fp4sim_depth_set #(
  parameter int unsigned UnitSel   = 0,   // 0: bs_dot_k64, 1: bs_dot_k32, 2: hif4_pe, 3: nvfp4_pe64
  parameter int unsigned ScaleFmt  = 0,   // bs_dot_k64 only
  parameter int unsigned Block     = 16,  // bs_dot_k64 only
  parameter int unsigned BackEnd   = 0,   // nvfp4_pe64 only (fp4sim_dp_pkg::Be*)
  parameter int unsigned NumDepths = 5
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic [NumDepths-1:0]     in_valid_i,
  output logic [NumDepths-1:0]     in_ready_o,
  input  logic [NumDepths*256-1:0] a_i,      // lane n in bits n*256 +: 256
  input  logic [NumDepths*256-1:0] b_i,
  // Lane n's scale ports in the low bits of word n; the units narrower than 32 bits (bs_dot_k64
  // with Block 32, bs_dot_k32) and the format codes (bs_dot_k32 only) leave bits unread.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [NumDepths*32-1:0]  sfa_i,
  input  logic [NumDepths*32-1:0]  sfb_i,
  input  logic [NumDepths*3-1:0]   fmt_a_i,
  input  logic [NumDepths*3-1:0]   fmt_b_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [NumDepths*32-1:0]  c_i,
  output logic [NumDepths-1:0]     out_valid_o,
  input  logic [NumDepths-1:0]     out_ready_i,
  output logic [NumDepths*32-1:0]  d_o
);

  for (genvar n = 0; n < NumDepths; n++) begin : g_lane
    if (UnitSel == 0) begin : g_k64
      localparam int unsigned SfW = 64 / Block * 8;
      bs_dot_k64 #(
        .ScaleFmt  (ScaleFmt),
        .Block     (Block),
        .PipeDepth (n + 1)
      ) u_unit (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .in_valid_i  (in_valid_i[n]),
        .in_ready_o  (in_ready_o[n]),
        .a_i         (a_i[n*256 +: 256]),
        .b_i         (b_i[n*256 +: 256]),
        .sfa_i       (sfa_i[n*32 +: SfW]),
        .sfb_i       (sfb_i[n*32 +: SfW]),
        .c_i         (c_i[n*32 +: 32]),
        .out_valid_o (out_valid_o[n]),
        .out_ready_i (out_ready_i[n]),
        .d_o         (d_o[n*32 +: 32])
      );
    end else if (UnitSel == 1) begin : g_k32
      bs_dot_k32 #(
        .PipeDepth (n + 1)
      ) u_unit (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .in_valid_i  (in_valid_i[n]),
        .in_ready_o  (in_ready_o[n]),
        .a_i         (a_i[n*256 +: 256]),
        .b_i         (b_i[n*256 +: 256]),
        .fmt_a_i     (fmt_a_i[n*3 +: 3]),
        .fmt_b_i     (fmt_b_i[n*3 +: 3]),
        .sfa_i       (sfa_i[n*32 +: 8]),
        .sfb_i       (sfb_i[n*32 +: 8]),
        .c_i         (c_i[n*32 +: 32]),
        .out_valid_o (out_valid_o[n]),
        .out_ready_i (out_ready_i[n]),
        .d_o         (d_o[n*32 +: 32])
      );
    end else if (UnitSel == 2) begin : g_hif4
      hif4_pe #(
        .PipeDepth (n + 1)
      ) u_unit (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .in_valid_i  (in_valid_i[n]),
        .in_ready_o  (in_ready_o[n]),
        .a_i         (a_i[n*256 +: 256]),
        .b_i         (b_i[n*256 +: 256]),
        .sfa_i       (sfa_i[n*32 +: 32]),
        .sfb_i       (sfb_i[n*32 +: 32]),
        .c_i         (c_i[n*32 +: 32]),
        .out_valid_o (out_valid_o[n]),
        .out_ready_i (out_ready_i[n]),
        .d_o         (d_o[n*32 +: 32])
      );
    end else begin : g_nvfp4
      nvfp4_pe64 #(
        .PipeDepth (n + 1),
        .BackEnd   (BackEnd)
      ) u_unit (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .in_valid_i  (in_valid_i[n]),
        .in_ready_o  (in_ready_o[n]),
        .a_i         (a_i[n*256 +: 256]),
        .b_i         (b_i[n*256 +: 256]),
        .sfa_i       (sfa_i[n*32 +: 32]),
        .sfb_i       (sfb_i[n*32 +: 32]),
        .c_i         (c_i[n*32 +: 32]),
        .out_valid_o (out_valid_o[n]),
        .out_ready_i (out_ready_i[n]),
        .d_o         (d_o[n*32 +: 32])
      );
    end
  end

endmodule
