with Ada.Strings.Unbounded;
with Ada.Unchecked_Conversion;

package body Libpq is

   use type System.Address;

   RTLD_NOW : constant C.int := 2;
   --  Every symbol bound at once: a library that lacks one is refused by
   --  Load, not met at a turn

   function Dl_Open (File : C.char_array; Mode : C.int) return System.Address
   with Import, Convention => C, External_Name => "dlopen";

   function Dl_Sym
     (Handle : System.Address; Symbol : C.char_array) return System.Address
   with Import, Convention => C, External_Name => "dlsym";

   function Dl_Error return C.Strings.chars_ptr
   with Import, Convention => C, External_Name => "dlerror";

   Library_Name : constant String := "libpq.so.5";

   function To_Connect_Params is new Ada.Unchecked_Conversion
     (System.Address, Connect_Params_Call);

   function To_Finish is new Ada.Unchecked_Conversion
     (System.Address, Finish_Call);

   function To_Reset is new Ada.Unchecked_Conversion
     (System.Address, Reset_Call);

   function To_Status is new Ada.Unchecked_Conversion
     (System.Address, Status_Call);

   function To_Transaction_Status is new Ada.Unchecked_Conversion
     (System.Address, Transaction_Status_Call);

   function To_Error_Message is new Ada.Unchecked_Conversion
     (System.Address, Error_Message_Call);

   function To_Db is new Ada.Unchecked_Conversion
     (System.Address, Db_Call);

   function To_Host is new Ada.Unchecked_Conversion
     (System.Address, Host_Call);

   function To_Port is new Ada.Unchecked_Conversion
     (System.Address, Port_Call);

   function To_Set_Notice_Processor is new Ada.Unchecked_Conversion
     (System.Address, Set_Notice_Processor_Call);

   function To_Exec is new Ada.Unchecked_Conversion
     (System.Address, Exec_Call);

   function To_Exec_Params is new Ada.Unchecked_Conversion
     (System.Address, Exec_Params_Call);

   function To_Enter_Pipeline_Mode is new Ada.Unchecked_Conversion
     (System.Address, Enter_Pipeline_Mode_Call);

   function To_Exit_Pipeline_Mode is new Ada.Unchecked_Conversion
     (System.Address, Exit_Pipeline_Mode_Call);

   function To_Send_Prepare is new Ada.Unchecked_Conversion
     (System.Address, Send_Prepare_Call);

   function To_Send_Query_Prepared is new Ada.Unchecked_Conversion
     (System.Address, Send_Query_Prepared_Call);

   function To_Send_Pipeline_Sync is new Ada.Unchecked_Conversion
     (System.Address, Send_Pipeline_Sync_Call);

   function To_Pipeline_Status is new Ada.Unchecked_Conversion
     (System.Address, Pipeline_Status_Call);

   function To_Get_Result is new Ada.Unchecked_Conversion
     (System.Address, Get_Result_Call);

   function To_Result_Status is new Ada.Unchecked_Conversion
     (System.Address, Result_Status_Call);

   function To_Result_Error_Message is new Ada.Unchecked_Conversion
     (System.Address, Result_Error_Message_Call);

   function To_Result_Error_Field is new Ada.Unchecked_Conversion
     (System.Address, Result_Error_Field_Call);

   function To_Tuples is new Ada.Unchecked_Conversion
     (System.Address, Tuples_Call);

   function To_Get_Value is new Ada.Unchecked_Conversion
     (System.Address, Get_Value_Call);

   function To_Get_Length is new Ada.Unchecked_Conversion
     (System.Address, Get_Length_Call);

   function To_Get_Is_Null is new Ada.Unchecked_Conversion
     (System.Address, Get_Is_Null_Call);

   function To_Clear is new Ada.Unchecked_Conversion
     (System.Address, Clear_Call);

   function Load return String is
      Library : System.Address;
      Missing : Ada.Strings.Unbounded.Unbounded_String;
      --  The first function the library lacks

      function Find (Name : String) return System.Address is
         use Ada.Strings.Unbounded;
         Where : constant System.Address := Dl_Sym (Library, C.To_C (Name));
      begin
         if Where = System.Null_Address
           and then Missing = Null_Unbounded_String
         then
            Missing := To_Unbounded_String (Name);
         end if;
         return Where;
      end Find;

      use type Ada.Strings.Unbounded.Unbounded_String;
   begin
      if Clear /= null then
         return "";
      end if;
      Library := Dl_Open (C.To_C (Library_Name), RTLD_NOW);
      if Library = System.Null_Address then
         return "cannot load " & Library_Name & ": "
           & C.Strings.Value (Dl_Error);
      end if;
      Connect_Params := To_Connect_Params (Find ("PQconnectdbParams"));
      Finish := To_Finish (Find ("PQfinish"));
      Reset := To_Reset (Find ("PQreset"));
      Status := To_Status (Find ("PQstatus"));
      Transaction_Status :=
        To_Transaction_Status (Find ("PQtransactionStatus"));
      Error_Message := To_Error_Message (Find ("PQerrorMessage"));
      Db := To_Db (Find ("PQdb"));
      Host := To_Host (Find ("PQhost"));
      Port := To_Port (Find ("PQport"));
      Set_Notice_Processor :=
        To_Set_Notice_Processor (Find ("PQsetNoticeProcessor"));
      Exec := To_Exec (Find ("PQexec"));
      Exec_Params := To_Exec_Params (Find ("PQexecParams"));
      Enter_Pipeline_Mode :=
        To_Enter_Pipeline_Mode (Find ("PQenterPipelineMode"));
      Exit_Pipeline_Mode :=
        To_Exit_Pipeline_Mode (Find ("PQexitPipelineMode"));
      Send_Prepare := To_Send_Prepare (Find ("PQsendPrepare"));
      Send_Query_Prepared :=
        To_Send_Query_Prepared (Find ("PQsendQueryPrepared"));
      Send_Pipeline_Sync := To_Send_Pipeline_Sync (Find ("PQpipelineSync"));
      Pipeline_Status := To_Pipeline_Status (Find ("PQpipelineStatus"));
      Get_Result := To_Get_Result (Find ("PQgetResult"));
      Result_Status := To_Result_Status (Find ("PQresultStatus"));
      Result_Error_Message :=
        To_Result_Error_Message (Find ("PQresultErrorMessage"));
      Result_Error_Field :=
        To_Result_Error_Field (Find ("PQresultErrorField"));
      Tuples := To_Tuples (Find ("PQntuples"));
      Get_Value := To_Get_Value (Find ("PQgetvalue"));
      Get_Length := To_Get_Length (Find ("PQgetlength"));
      Get_Is_Null := To_Get_Is_Null (Find ("PQgetisnull"));
      Clear := To_Clear (Find ("PQclear"));
      if Missing /= Ada.Strings.Unbounded.Null_Unbounded_String then
         Clear := null;
         --  Not loaded: Clear says whether the binding is
         return Library_Name & " has no "
           & Ada.Strings.Unbounded.To_String (Missing)
           & " (libpq 14 or later is needed)";
      end if;
      return "";
   end Load;

end Libpq;
